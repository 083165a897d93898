package scenario

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The placement shows each node's devices in use: devices of its own
// pools allocated to claims, each counted once, out of all it publishes.
func TestPlacementCountsDevicesInUse(t *testing.T) {
	v := testView()
	slice := func(node string, devices int) resourcev1.ResourceSlice {
		s := resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: ptr.To(node),
			Pool: resourcev1.ResourcePool{Name: node}}}
		for range devices {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{})
		}
		return s
	}
	claim := func(pool string, devices ...string) resourcev1.ResourceClaim {
		c := resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: pool}, Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}}
		for _, d := range devices {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
				resourcev1.DeviceRequestAllocationResult{Driver: "gpu.example.com", Pool: pool, Device: d})
		}
		return c
	}
	v.slices = []resourcev1.ResourceSlice{slice("n1", 8), slice("n2", 4), slice("n2", 4)}
	v.claims = []resourcev1.ResourceClaim{claim("n1", "gpu-0", "gpu-1", "gpu-2"), claim("n1", "gpu-2"), claim("n2", "gpu-5"), {}}
	table := v.placement("").Table()
	for _, want := range []string{"n1 ", "[devices in use: gpu.example.com 3/8]", "[devices in use: gpu.example.com 1/8]"} {
		if !strings.Contains(table, want) {
			t.Errorf("placement lacks %q:\n%s", want, table)
		}
	}
	if strings.Count(table, "devices in use") != 2 {
		t.Errorf("nodes without devices show some:\n%s", table)
	}
}

package devices

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func group(t *testing.T, devices string) *v1alpha1.NodeGroup {
	t.Helper()
	g := &v1alpha1.NodeGroup{Name: "gpu", Count: 2}
	if err := json.Unmarshal([]byte(devices), &g.Devices); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.ValidateNodeGroups("nodeGroups", []v1alpha1.NodeGroup{*g}); err != nil {
		t.Fatal(err)
	}
	return g
}

func qty(q resource.Quantity) *resource.Quantity { return &q }

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + types.UID(name)}}
}

func TestOnePoolPerNodeAndDriverOwnedByTheNode(t *testing.T) {
	g := group(t, `[{"driver":"gpu.kubesim.io","count":8,"attributes":{"model":"H100","memory":"80Gi"}},
		{"driver":"nic.kubesim.io","count":2},{"driver":"gpu.kubesim.io","name":"small","count":1}]`)
	out := Slices(node("gpu-0"), "gpu", g.Devices)
	if len(out) != 2 {
		t.Fatalf("%d slices, want one per driver", len(out))
	}
	gpu := out[0]
	if gpu.Spec.Driver != "gpu.kubesim.io" || gpu.Spec.Pool.Name != "gpu-0" || *gpu.Spec.NodeName != "gpu-0" || gpu.Spec.Pool.ResourceSliceCount != 1 {
		t.Errorf("slice spec: %+v", gpu.Spec)
	}
	if len(gpu.Spec.Devices) != 9 || gpu.Spec.Devices[0].Name != "gpu-0" || gpu.Spec.Devices[8].Name != "small-0" {
		t.Errorf("devices: %d, first %s", len(gpu.Spec.Devices), gpu.Spec.Devices[0].Name)
	}
	d := gpu.Spec.Devices[0]
	if *d.Attributes["model"].StringValue != "H100" || qty(d.Capacity["memory"].Value).Cmp(resource.MustParse("80Gi")) != 0 {
		t.Errorf("device: %+v", d)
	}
	if o := gpu.OwnerReferences; len(o) != 1 || o[0].Kind != "Node" || o[0].Name != "gpu-0" || o[0].UID == "" {
		t.Errorf("owner: %+v", o)
	}
	if gpu.Labels[v1alpha1.NodeGroupLabel] != "gpu" {
		t.Errorf("labels: %v", gpu.Labels)
	}
	classes := Classes(g.Devices)
	if len(classes) != 2 || classes[0].Name != "gpu.kubesim.io" || classes[0].Spec.Selectors[0].CEL.Expression != `device.driver == "gpu.kubesim.io"` {
		t.Errorf("classes: %+v", classes)
	}
}

// More devices than a slice holds go into several slices of one pool, as
// drivers publish them: 128 a slice, 64 with taints or partitions.
func TestManyDevicesAreSplitAcrossSlices(t *testing.T) {
	for _, tc := range []struct {
		devices      string
		slices       int
		devicesFirst int
	}{
		{`[{"driver":"gpu.kubesim.io","count":300}]`, 3, 128},
		{`[{"driver":"gpu.kubesim.io","count":100,"taints":[{"key":"k","effect":"NoSchedule"}]}]`, 2, 64},
		// 8 devices and 7 parts each: 64 devices, and their 8 counter sets in a slice of their own.
		{`[{"driver":"gpu.kubesim.io","count":8,"partitions":7,"capacity":{"memory":"80Gi"}}]`, 2, 0},
		{`[{"driver":"gpu.kubesim.io","count":9,"partitions":7}]`, 4, 0},
	} {
		g := group(t, tc.devices)
		out := Slices(node("gpu-0"), "gpu", g.Devices)
		if len(out) != tc.slices {
			t.Errorf("%s: %d slices, want %d", tc.devices, len(out), tc.slices)
			continue
		}
		total := 0
		for _, s := range out {
			total += len(s.Spec.Devices)
			if s.Spec.Pool.ResourceSliceCount != int64(tc.slices) || s.Spec.Pool.Name != "gpu-0" {
				t.Errorf("%s: pool %+v", tc.devices, s.Spec.Pool)
			}
			if len(s.Spec.Devices) > resourcev1.ResourceSliceMaxDevices || len(s.Spec.SharedCounters) > resourcev1.ResourceSliceMaxCounterSets {
				t.Errorf("%s: slice %s over DRA's limits", tc.devices, s.Name)
			}
		}
		if want := g.Devices[0].Count * (1 + g.Devices[0].Partitions); total != want {
			t.Errorf("%s: %d devices in all, want %d", tc.devices, total, want)
		}
		if len(out[0].Spec.Devices) != tc.devicesFirst {
			t.Errorf("%s: first slice has %d devices, want %d", tc.devices, len(out[0].Spec.Devices), tc.devicesFirst)
		}
	}
}

// A partitioned device's parts and the whole draw on one counter set: the
// whole takes all of it, a part its share.
func TestPartitionsShareTheDevicesCounters(t *testing.T) {
	g := group(t, `[{"driver":"gpu.kubesim.io","count":1,"partitions":7,"capacity":{"memory":"80Gi"}}]`)
	out := Slices(node("gpu-0"), "gpu", g.Devices)
	counters, devs := out[0].Spec.SharedCounters, out[1].Spec.Devices
	if len(counters) != 1 || counters[0].Name != "gpu-0" || qty(counters[0].Counters["parts"].Value).Value() != 7 {
		t.Fatalf("counters: %+v", counters)
	}
	if len(devs) != 8 || *devs[0].Attributes["partition"].BoolValue || !*devs[1].Attributes["partition"].BoolValue || devs[7].Name != "gpu-0-part-6" {
		t.Fatalf("devices: %+v", devs)
	}
	if c := devs[0].ConsumesCounters[0].Counters; qty(c["parts"].Value).Value() != 7 || qty(c["memory"].Value).Cmp(resource.MustParse("80Gi")) != 0 {
		t.Errorf("the whole device consumes %+v", c)
	}
	part := devs[1].ConsumesCounters[0].Counters
	if qty(part["parts"].Value).Value() != 1 || qty(part["memory"].Value).Value()*7 > qty(resource.MustParse("80Gi")).Value() {
		t.Errorf("a part consumes %+v", part)
	}
}

// A scale publishes what is missing, rewrites what changed, and deletes
// the slices of nodes the group no longer has.
func TestPlanKeepsSlicesInStep(t *testing.T) {
	ctx := context.Background()
	g := group(t, `[{"driver":"gpu.kubesim.io","count":8}]`)
	client := fake.NewClientset()
	apply := func(nodes ...*corev1.Node) []Change {
		existing, err := Existing(ctx, client, g)
		if err != nil {
			t.Fatal(err)
		}
		changes := Plan(g, nodes, existing)
		for _, c := range changes {
			if err := Write(ctx, client, c); err != nil {
				t.Fatal(err)
			}
		}
		return changes
	}
	if c := apply(node("gpu-0"), node("gpu-1")); len(c) != 2 {
		t.Errorf("first publish: %d changes, want 2 creates", len(c))
	}
	if c := apply(node("gpu-0"), node("gpu-1")); len(c) != 0 {
		t.Errorf("again: %d changes, want none", len(c))
	}
	g.Devices[0].Count = 4
	if c := apply(node("gpu-0")); len(c) != 2 || !c[0].Update || !c[1].Delete {
		t.Errorf("fewer devices and nodes: %+v, want an update and a delete", c)
	}
	list, _ := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if len(list.Items) != 1 || len(list.Items[0].Spec.Devices) != 4 {
		t.Errorf("left: %+v", list.Items)
	}
	if err := EnsureClasses(ctx, client, g); err != nil {
		t.Fatal(err)
	}
	if err := EnsureClasses(ctx, client, g); err != nil {
		t.Errorf("a class that exists: %v", err)
	}
}

// Package devices turns a node group's declared DRA devices into what a
// DRA driver would publish for each of its nodes: ResourceSlices (one pool
// per node and driver, named after the node, owned by the Node so they go
// with it) and a DeviceClass per driver. The scheduler, the
// controller-manager and the device-taint controller do the rest: kubesim
// decides nothing about devices.
package devices

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Labels on what this package publishes: the group whose nodes have the
// devices and the node; hashLabel holds a digest of the slice's spec, so
// a scale sees at once whether a slice is as the group says.
const (
	nodeLabel  = "kubesim.io/node"
	hashLabel  = "kubesim.io/devices-hash"
	ManagedBy  = "kubesim"
	managedKey = "app.kubernetes.io/managed-by"
)

// partsCounter counts a partitioned device's parts in its counter set.
const partsCounter = "parts"

// Slices are the ResourceSlices node publishes for devs, the devices of
// its group: for each driver, the pool named after the node, in as many
// slices as DRA's limits need (128 devices a slice, 64 with taints or
// partitions; 8 counter sets a slice, in slices of their own).
func Slices(node *corev1.Node, group string, devs []v1alpha1.Devices) []*resourcev1.ResourceSlice {
	var drivers []string
	for _, d := range devs {
		if !slices.Contains(drivers, d.Driver) {
			drivers = append(drivers, d.Driver)
		}
	}
	var out []*resourcev1.ResourceSlice
	for _, driver := range drivers {
		var devices []resourcev1.Device
		var counters []resourcev1.CounterSet
		advanced := false
		for i := range devs {
			d := &devs[i]
			if d.Driver != driver {
				continue
			}
			dv, cs := deviceList(d)
			devices, counters = append(devices, dv...), append(counters, cs...)
			advanced = advanced || d.Partitions > 0 || len(d.Taints) > 0
		}
		perSlice := resourcev1.ResourceSliceMaxDevices
		if advanced {
			perSlice = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
		}
		var specs []resourcev1.ResourceSliceSpec
		for chunk := range slices.Chunk(counters, resourcev1.ResourceSliceMaxCounterSets) {
			specs = append(specs, resourcev1.ResourceSliceSpec{SharedCounters: chunk})
		}
		for chunk := range slices.Chunk(devices, perSlice) {
			specs = append(specs, resourcev1.ResourceSliceSpec{Devices: chunk})
		}
		if len(specs) == 0 {
			specs = append(specs, resourcev1.ResourceSliceSpec{}) // count: 0 is a pool with no devices
		}
		for i, spec := range specs {
			spec.Driver = driver
			spec.NodeName = ptr.To(node.Name)
			spec.Pool = resourcev1.ResourcePool{Name: node.Name, Generation: 1, ResourceSliceCount: int64(len(specs))}
			out = append(out, &resourcev1.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{
					Name: SliceName(node.Name, driver, i),
					Labels: map[string]string{
						v1alpha1.NodeGroupLabel: group,
						nodeLabel:               node.Name,
						managedKey:              ManagedBy,
						hashLabel:               hash(spec),
					},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
				},
				Spec: spec,
			})
		}
	}
	return out
}

// SliceName is the name of the i-th slice of node's pool of driver.
func SliceName(node, driver string, i int) string {
	name := node + "-" + driver + "-" + strconv.Itoa(i)
	if len(name) > validation.DNS1123SubdomainMaxLength {
		// Still unique: the digest of what it stands for.
		sum := sha256.Sum256([]byte(name))
		name = name[:validation.DNS1123SubdomainMaxLength-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return name
}

// Matches reports whether a published slice is as want says.
func Matches(have, want *resourcev1.ResourceSlice) bool {
	return have.Labels[hashLabel] == want.Labels[hashLabel] && len(have.OwnerReferences) == 1 &&
		have.OwnerReferences[0].UID == want.OwnerReferences[0].UID
}

// hash is a digest of spec, short enough for a label value.
func hash(spec resourcev1.ResourceSliceSpec) string {
	data, _ := json.Marshal(spec)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// deviceList is d's devices on one node, and the counter sets their parts
// share (none without partitions).
func deviceList(d *v1alpha1.Devices) ([]resourcev1.Device, []resourcev1.CounterSet) {
	attrs, capacity := d.SplitAttributes()
	var devices []resourcev1.Device
	var counters []resourcev1.CounterSet
	for i := range d.Count {
		name := d.DeviceName(i)
		whole := device(d, name, attrs, capacity)
		if d.Partitions == 0 {
			devices = append(devices, whole)
			continue
		}
		// The whole device takes every counter; each part its share.
		all := map[string]resourcev1.Counter{partsCounter: {Value: *resource.NewQuantity(int64(d.Partitions), resource.DecimalSI)}}
		share := map[string]resourcev1.Counter{partsCounter: {Value: *resource.NewQuantity(1, resource.DecimalSI)}}
		partCapacity := map[resourcev1.QualifiedName]resource.Quantity{}
		for _, c := range slices.Sorted(maps.Keys(capacity)) {
			q := capacity[c]
			part := divide(q, d.Partitions)
			partCapacity[c] = part
			if len(validation.IsDNS1123Label(string(c))) == 0 {
				all[string(c)] = resourcev1.Counter{Value: q.DeepCopy()}
				share[string(c)] = resourcev1.Counter{Value: part}
			}
		}
		counters = append(counters, resourcev1.CounterSet{Name: name, Counters: all})
		whole.Attributes[v1alpha1.PartitionAttribute] = resourcev1.DeviceAttribute{BoolValue: ptr.To(false)}
		whole.ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: name, Counters: all}}
		devices = append(devices, whole)
		for j := range d.Partitions {
			part := device(d, name+"-part-"+strconv.Itoa(j), attrs, partCapacity)
			part.Attributes[v1alpha1.PartitionAttribute] = resourcev1.DeviceAttribute{BoolValue: ptr.To(true)}
			part.ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: name, Counters: share}}
			devices = append(devices, part)
		}
	}
	return devices, counters
}

// device is one device called name with d's attributes, taints and
// binding conditions and the given capacity.
func device(d *v1alpha1.Devices, name string, attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute,
	capacity map[resourcev1.QualifiedName]resource.Quantity) resourcev1.Device {
	dev := resourcev1.Device{Name: name, Attributes: maps.Clone(attrs)}
	if dev.Attributes == nil {
		dev.Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
	}
	if len(capacity) > 0 {
		dev.Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}
		for c, q := range capacity {
			dev.Capacity[c] = resourcev1.DeviceCapacity{Value: q.DeepCopy()}
		}
	}
	dev.Taints = slices.Clone(d.Taints)
	if len(d.BindingConditions) > 0 {
		dev.BindingConditions = slices.Clone(d.BindingConditions)
		dev.BindingFailureConditions = slices.Clone(d.BindingFailureConditions)
		// The allocation then names the node, so the conditions the
		// simulator sets are on the node the pod goes to.
		dev.BindsToNode = ptr.To(true)
	}
	return dev
}

// divide is q/n, rounded down, in q's format.
func divide(q resource.Quantity, n int) resource.Quantity {
	if v := q.Value(); v >= int64(n) && v%int64(n) == 0 || v >= 1<<20 {
		return *resource.NewQuantity(v/int64(n), q.Format)
	}
	return *resource.NewMilliQuantity(q.MilliValue()/int64(n), q.Format)
}

// Classes are the DeviceClasses of devs' drivers: each named after its
// driver, selecting every device of it.
func Classes(devs []v1alpha1.Devices) []*resourcev1.DeviceClass {
	var out []*resourcev1.DeviceClass
	seen := map[string]bool{}
	for _, d := range devs {
		if seen[d.Driver] {
			continue
		}
		seen[d.Driver] = true
		out = append(out, &resourcev1.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: d.Driver, Labels: map[string]string{managedKey: ManagedBy}},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
				CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", d.Driver)},
			}}},
		})
	}
	return out
}

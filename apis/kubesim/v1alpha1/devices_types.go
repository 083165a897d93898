package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Devices are alike Dynamic Resource Allocation devices on every node of a
// group (8 GPUs of one model, say), published as ResourceSlices of their
// driver: one pool per node and driver, named after the node.
type Devices struct {
	// Driver is the DRA driver that would publish them: a DNS subdomain
	// (gpu.kubesim.io). A DeviceClass of that name selecting the driver's
	// devices is made unless one exists.
	Driver string `json:"driver"`
	// Count is how many devices each node has.
	Count int `json:"count"`
	// Name is the devices' names before their number (gpu: gpu-0, gpu-1,
	// …); default the driver's first label.
	Name string `json:"name,omitempty"`
	// Attributes are each device's, typed as DRA types them: true/false a
	// bool, a whole number an int, a semantic version (1.2.3) a version,
	// other text a string; {version: …}, {string: …}, {int: …} or
	// {bool: …} say it outright. A quantity with a unit (80Gi) is a
	// capacity. A name without a domain is in the driver's.
	Attributes map[string]DeviceAttribute `json:"attributes,omitempty"`
	// Capacity is each device's (memory: 80Gi).
	Capacity map[string]resource.Quantity `json:"capacity,omitempty"`
	// Partitions, if more than 0, also offers each device as that many
	// equal parts (MIG-like) drawing on counters the whole device shares
	// with them: an allocated part leaves the whole device unallocatable,
	// and the whole device allocated leaves no part. Parts are called
	// NAME-I-part-J and have the attribute partition: true (the whole
	// device false), and a share of each capacity.
	Partitions int `json:"partitions,omitempty"`
	// Taints are put on every device (DRA device taints: NoSchedule,
	// NoExecute, None).
	Taints []resourcev1.DeviceTaint `json:"taints,omitempty"`
	// BindingConditions and BindingFailureConditions are set on every
	// device: the scheduler waits before binding a pod until the
	// conditions are True in its claim's status; the simulator sets them,
	// as a driver would.
	BindingConditions        []string `json:"bindingConditions,omitempty"`
	BindingFailureConditions []string `json:"bindingFailureConditions,omitempty"`
}

// DeviceAttribute is one attribute's value: exactly one field is set.
// Quantity is not an attribute DRA has: it is a capacity written among the
// attributes (memory: 80Gi).
type DeviceAttribute struct {
	Int      *int64             `json:"int,omitempty"`
	Bool     *bool              `json:"bool,omitempty"`
	String   *string            `json:"string,omitempty"`
	Version  *string            `json:"version,omitempty"`
	Quantity *resource.Quantity `json:"quantity,omitempty"`
}

// semver is a semantic version as DRA takes it (no leading v).
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// quantityUnit ends a quantity that goes to capacity rather than being
// text: 80Gi, 1.5T.
var quantityUnit = regexp.MustCompile(`^[0-9.]+(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)$`)

// UnmarshalJSON types a plain value by its form, or reads the explicit
// {int|bool|string|version: …}.
func (a *DeviceAttribute) UnmarshalJSON(data []byte) error {
	*a = DeviceAttribute{}
	data = bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(data, []byte("{")):
		type explicit DeviceAttribute
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode((*explicit)(a)); err != nil {
			return fmt.Errorf("an attribute is a value or one of {int: …}, {bool: …}, {string: …}, {version: …}: %w", err)
		}
		if a.set() != 1 {
			return fmt.Errorf("an attribute's {…} form takes exactly one of int, bool, string, version")
		}
		return nil
	case string(data) == "true" || string(data) == "false":
		b := string(data) == "true"
		a.Bool = &b
	case bytes.HasPrefix(data, []byte(`"`)):
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		switch {
		case semver.MatchString(s):
			a.Version = &s
		case quantityUnit.MatchString(s):
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return err
			}
			a.Quantity = &q
		default:
			a.String = &s
		}
	case string(data) == "null":
		return fmt.Errorf("an attribute needs a value")
	default:
		i, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return fmt.Errorf("%s is not a whole number, true, false or text (DRA attributes are int, bool, string or version)", data)
		}
		a.Int = &i
	}
	return nil
}

// MarshalJSON writes the plain form where reading it back gives the same
// type, else the explicit one.
func (a DeviceAttribute) MarshalJSON() ([]byte, error) {
	switch {
	case a.Int != nil:
		return json.Marshal(*a.Int)
	case a.Bool != nil:
		return json.Marshal(*a.Bool)
	case a.Quantity != nil:
		return json.Marshal(a.Quantity.String())
	case a.String != nil && !semver.MatchString(*a.String) && !quantityUnit.MatchString(*a.String):
		return json.Marshal(*a.String)
	}
	type explicit DeviceAttribute
	return json.Marshal(explicit(a))
}

func (a *DeviceAttribute) set() int {
	n := 0
	for _, set := range []bool{a.Int != nil, a.Bool != nil, a.String != nil, a.Version != nil, a.Quantity != nil} {
		if set {
			n++
		}
	}
	return n
}

// DeviceName is the name of device i of d.
func (d *Devices) DeviceName(i int) string { return d.NamePrefix() + "-" + strconv.Itoa(i) }

// NamePrefix is Name, or the driver's first label.
func (d *Devices) NamePrefix() string {
	if d.Name != "" {
		return d.Name
	}
	first, _, _ := strings.Cut(d.Driver, ".")
	return first
}

// SplitAttributes are d's attributes as DRA has them and its capacity
// with the quantities written among the attributes.
func (d *Devices) SplitAttributes() (map[resourcev1.QualifiedName]resourcev1.DeviceAttribute, map[resourcev1.QualifiedName]resource.Quantity) {
	attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
	capacity := map[resourcev1.QualifiedName]resource.Quantity{}
	for name, a := range d.Attributes {
		if a.Quantity != nil {
			capacity[resourcev1.QualifiedName(name)] = a.Quantity.DeepCopy()
			continue
		}
		attrs[resourcev1.QualifiedName(name)] = resourcev1.DeviceAttribute{IntValue: a.Int, BoolValue: a.Bool, StringValue: a.String, VersionValue: a.Version}
	}
	for name, q := range d.Capacity {
		capacity[resourcev1.QualifiedName(name)] = q.DeepCopy()
	}
	return attrs, capacity
}

// MaxDevicesPerNode bounds a group's devices of one driver on a node: 64
// ResourceSlices of 128 devices. More would be a pool no scheduler reads
// quickly, and no driver publishes.
const MaxDevicesPerNode = 64 * resourcev1.ResourceSliceMaxDevices

// validateDevices checks a group's devices; the error starts with the
// field's name (devices[0].driver: …).
func validateDevices(devices []Devices) error {
	perDriver := map[string]int{}
	prefixes := map[string]bool{}
	for i := range devices {
		d := &devices[i]
		if err := d.validate(); err != nil {
			return fmt.Errorf("devices[%d].%w", i, err)
		}
		key := d.Driver + "/" + d.NamePrefix()
		if prefixes[key] {
			return fmt.Errorf("devices[%d].name: %q is used by another entry of driver %s on these nodes; give each a name of its own", i, d.NamePrefix(), d.Driver)
		}
		prefixes[key] = true
		perDriver[d.Driver] += d.Count * (1 + d.Partitions)
		if perDriver[d.Driver] > MaxDevicesPerNode {
			return fmt.Errorf("devices[%d].count: the driver %s would have %d devices on a node (partitions count); at most %d", i, d.Driver, perDriver[d.Driver], MaxDevicesPerNode)
		}
	}
	return nil
}

func (d *Devices) validate() error {
	if errs := validation.IsDNS1123Subdomain(d.Driver); len(errs) > 0 || len(d.Driver) > resourcev1.DriverNameMaxLength {
		return fmt.Errorf("driver: %q is not a driver name: a DNS subdomain of at most %d lowercase letters, digits, '-' and '.' (gpu.example.com)", d.Driver, resourcev1.DriverNameMaxLength)
	}
	if d.Count < 0 || d.Count > MaxDevicesPerNode {
		return fmt.Errorf("count: must be between 0 and %d devices a node, got %d", MaxDevicesPerNode, d.Count)
	}
	// The longest name: of a part of the last device.
	longest := d.DeviceName(max(d.Count-1, 0))
	if d.Partitions > 0 {
		longest += "-part-" + strconv.Itoa(d.Partitions-1)
	}
	if errs := validation.IsDNS1123Label(longest); len(errs) > 0 {
		return fmt.Errorf("name: the devices would be called %s, not a DNS label (at most 63 lowercase letters, digits or '-'); give a shorter name", longest)
	}
	if d.Partitions < 0 || d.Partitions > resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures-1 {
		return fmt.Errorf("partitions: must be between 0 and %d, got %d", resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures-1, d.Partitions)
	}
	for _, name := range slices.Sorted(maps.Keys(d.Attributes)) {
		a := d.Attributes[name]
		if err := checkQualifiedName(name); err != nil {
			return fmt.Errorf("attributes: %q is not an attribute name: %w", name, err)
		}
		if a.set() != 1 {
			return fmt.Errorf("attributes.%s: give exactly one of int, bool, string, version", name)
		}
		if a.Quantity != nil {
			if _, ok := d.Capacity[name]; ok {
				return fmt.Errorf("attributes.%s: %s is a quantity, so a capacity, and capacity.%s is given too; give it once", name, a.Quantity.String(), name)
			}
			if a.Quantity.Sign() < 0 {
				return fmt.Errorf("attributes.%s: must not be negative, got %s", name, a.Quantity.String())
			}
		}
		if name == partitionAttribute && d.Partitions > 0 {
			return fmt.Errorf("attributes.%s: kubesim sets it on devices with partitions; leave it out or rename it", name)
		}
		for _, s := range []*string{a.String, a.Version} {
			if s != nil && len(*s) > resourcev1.DeviceAttributeMaxValueLength {
				return fmt.Errorf("attributes.%s: %d characters; DRA takes at most %d", name, len(*s), resourcev1.DeviceAttributeMaxValueLength)
			}
		}
		if a.Version != nil && !semver.MatchString(*a.Version) {
			return fmt.Errorf("attributes.%s: %q is not a semantic version (1.2.3); for text, write {string: %q}", name, *a.Version, *a.Version)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.Capacity)) {
		if err := checkQualifiedName(name); err != nil {
			return fmt.Errorf("capacity: %q is not a capacity name: %w", name, err)
		}
		if q := d.Capacity[name]; q.Sign() < 0 {
			return fmt.Errorf("capacity.%s: must not be negative, got %s", name, q.String())
		}
	}
	if n := len(d.Attributes) + len(d.Capacity) + min(d.Partitions, 1); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		return fmt.Errorf("attributes: %d attributes and capacities a device (partition counts when partitions are set); DRA takes at most %d", n, resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)
	}
	if len(d.Taints) > resourcev1.DeviceTaintsMaxLength {
		return fmt.Errorf("taints: %d taints; DRA takes at most %d a device", len(d.Taints), resourcev1.DeviceTaintsMaxLength)
	}
	for j, t := range d.Taints {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("taints[%d].key: %q is not a taint key: %s", j, t.Key, strings.Join(errs, "; "))
		}
		if t.Value != "" {
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return fmt.Errorf("taints[%d].value: %q is not a taint value: %s", j, t.Value, strings.Join(errs, "; "))
			}
		}
		switch t.Effect {
		case resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone:
		default:
			return fmt.Errorf("taints[%d].effect: %q is not a device taint effect; use NoSchedule, NoExecute or None", j, t.Effect)
		}
	}
	for field, conds := range map[string][]string{"bindingConditions": d.BindingConditions, "bindingFailureConditions": d.BindingFailureConditions} {
		if len(conds) > resourcev1.BindingConditionsMaxSize {
			return fmt.Errorf("%s: %d conditions; DRA takes at most %d", field, len(conds), resourcev1.BindingConditionsMaxSize)
		}
		for _, c := range conds {
			if errs := validation.IsQualifiedName(c); len(errs) > 0 {
				return fmt.Errorf("%s: %q is not a condition type: %s", field, c, strings.Join(errs, "; "))
			}
		}
	}
	if (len(d.BindingConditions) == 0) != (len(d.BindingFailureConditions) == 0) {
		return fmt.Errorf("bindingFailureConditions: DRA takes bindingConditions and bindingFailureConditions together or neither (bindingFailureConditions: [Failed])")
	}
	for _, c := range d.BindingFailureConditions {
		if slices.Contains(d.BindingConditions, c) {
			return fmt.Errorf("bindingFailureConditions: %q is in bindingConditions too; a condition is one or the other", c)
		}
	}
	return nil
}

// partitionAttribute tells the parts of a partitioned device from the
// whole one.
const partitionAttribute = "partition"

// PartitionAttribute is the attribute that tells parts (true) from whole
// devices (false) where a group's devices have partitions.
const PartitionAttribute = partitionAttribute

// checkQualifiedName checks a DRA attribute or capacity name: an
// identifier of at most 32 characters, after an optional DNS subdomain
// and '/'.
func checkQualifiedName(name string) error {
	id := name
	if domain, rest, ok := strings.Cut(name, "/"); ok {
		if errs := validation.IsDNS1123Subdomain(domain); len(errs) > 0 || len(domain) > resourcev1.DeviceMaxDomainLength {
			return fmt.Errorf("its domain %q is not a DNS subdomain of at most %d characters", domain, resourcev1.DeviceMaxDomainLength)
		}
		id = rest
	}
	if errs := validation.IsCIdentifier(id); len(errs) > 0 || len(id) > resourcev1.DeviceMaxIDLength {
		return fmt.Errorf("%q is not an identifier of at most %d letters, digits and '_' starting with a letter or '_'", id, resourcev1.DeviceMaxIDLength)
	}
	return nil
}

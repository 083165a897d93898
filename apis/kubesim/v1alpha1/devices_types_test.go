package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDeviceAttributesAreTypedAsDRATypesThem(t *testing.T) {
	var d Devices
	in := `{"driver":"gpu.kubesim.io","count":8,"attributes":{"model":"H100","numa":"0..1","cores":132,"mig":true,` +
		`"driverVersion":"550.54.15","cuda":{"version":"12.4.0"},"label":{"string":"1.2.3"},"memory":"80Gi"}}`
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	attrs, capacity := d.SplitAttributes()
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	check("model", *attrs["model"].StringValue, "H100")
	check("numa", *attrs["numa"].StringValue, "0..1")
	check("cores", *attrs["cores"].IntValue, int64(132))
	check("mig", *attrs["mig"].BoolValue, true)
	check("driverVersion", *attrs["driverVersion"].VersionValue, "550.54.15")
	check("cuda", *attrs["cuda"].VersionValue, "12.4.0")
	check("label", *attrs["label"].StringValue, "1.2.3")
	if q, ok := capacity["memory"]; !ok || q.Cmp(resource.MustParse("80Gi")) != 0 {
		t.Errorf("memory: %v in capacity %v, want 80Gi", q, capacity)
	}
	if _, ok := attrs["memory"]; ok {
		t.Error("memory: a quantity left among the attributes")
	}
	// cluster.yaml keeps what was read: written and read again, the same.
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var again Devices
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	a2, c2 := again.SplitAttributes()
	if len(a2) != len(attrs) || len(c2) != len(capacity) || *a2["label"].StringValue != "1.2.3" || *a2["cuda"].VersionValue != "12.4.0" {
		t.Errorf("round trip through %s changed the attributes", out)
	}
	for _, bad := range []string{`{"a":1.5}`, `{"a":null}`, `{"a":{"int":1,"bool":true}}`, `{"a":{"float":1}}`, `{"a":[1]}`} {
		var m map[string]DeviceAttribute
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s: read without an error", bad)
		}
	}
}

func TestDevicesValidateNamesTheField(t *testing.T) {
	str := func(s string) DeviceAttribute { return DeviceAttribute{String: &s} }
	ok := func() []NodeGroup {
		return []NodeGroup{{Name: "gpu", Count: 2, Devices: []Devices{{Driver: "gpu.kubesim.io", Count: 8,
			Attributes: map[string]DeviceAttribute{"model": str("H100")},
			Capacity:   map[string]resource.Quantity{"memory": resource.MustParse("80Gi")}}}}}
	}
	for _, tc := range []struct {
		change func(*Devices)
		want   string
	}{
		{func(d *Devices) { d.Driver = "GPU_driver" }, `nodeGroups[0].devices[0].driver: "GPU_driver" is not a driver name`},
		{func(d *Devices) { d.Driver = strings.Repeat("a", 64) + ".io" }, `nodeGroups[0].devices[0].driver:`},
		{func(d *Devices) { d.Count = -1 }, "nodeGroups[0].devices[0].count: must be between 0 and 8192"},
		{func(d *Devices) { d.Count = MaxDevicesPerNode + 1 }, "nodeGroups[0].devices[0].count: must be between 0 and 8192"},
		{func(d *Devices) { d.Attributes["bad-name"] = str("x") }, `nodeGroups[0].devices[0].attributes: "bad-name" is not an attribute name`},
		{func(d *Devices) { d.Attributes[strings.Repeat("a", 33)] = str("x") }, `nodeGroups[0].devices[0].attributes: "aaaa`},
		{func(d *Devices) { d.Attributes["model"] = str(strings.Repeat("x", 65)) }, "nodeGroups[0].devices[0].attributes.model: 65 characters; DRA takes at most 64"},
		{func(d *Devices) { v := "12.4"; d.Attributes["cuda"] = DeviceAttribute{Version: &v} }, `nodeGroups[0].devices[0].attributes.cuda: "12.4" is not a semantic version`},
		{func(d *Devices) {
			q := resource.MustParse("1Gi")
			d.Attributes["memory"] = DeviceAttribute{Quantity: &q}
		}, "nodeGroups[0].devices[0].attributes.memory: 1Gi is a quantity, so a capacity, and capacity.memory is given too"},
		{func(d *Devices) { d.Capacity["memory"] = resource.MustParse("-1") }, "nodeGroups[0].devices[0].capacity.memory: must not be negative"},
		{func(d *Devices) {
			for i := range 32 {
				d.Attributes["a"+strings.Repeat("x", i)] = str("x")
			}
		}, "nodeGroups[0].devices[0].attributes: 34 attributes and capacities a device"},
		{func(d *Devices) { d.Taints = []resourcev1.DeviceTaint{{Key: "broken", Effect: "Sometimes"}} }, `nodeGroups[0].devices[0].taints[0].effect: "Sometimes"`},
		{func(d *Devices) { d.BindingConditions = []string{"Ready"} }, "nodeGroups[0].devices[0].bindingFailureConditions: DRA takes"},
		{func(d *Devices) {
			d.BindingConditions, d.BindingFailureConditions = []string{"Ready"}, []string{"Ready"}
		}, `nodeGroups[0].devices[0].bindingFailureConditions: "Ready" is in bindingConditions too`},
		{func(d *Devices) { d.BindingConditions = []string{"a", "b", "c", "d", "e"} }, "nodeGroups[0].devices[0].bindingConditions: 5 conditions; DRA takes at most 4"},
		{func(d *Devices) { d.BindingFailureConditions = []string{"Failed"} }, "nodeGroups[0].devices[0].bindingFailureConditions: DRA takes bindingConditions and bindingFailureConditions together"},
		{func(d *Devices) { d.Partitions = 64 }, "nodeGroups[0].devices[0].partitions: must be between 0 and 63"},
		{func(d *Devices) { d.Name = strings.Repeat("g", 62) }, "nodeGroups[0].devices[0].name: the devices would be called"},
	} {
		groups := ok()
		if err := ValidateNodeGroups("nodeGroups", groups); err != nil {
			t.Fatalf("valid groups refused: %v", err)
		}
		tc.change(&groups[0].Devices[0])
		err := ValidateNodeGroups("nodeGroups", groups)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want an error starting %q", err, tc.want)
		}
	}
	groups := ok()
	groups[0].Devices = append(groups[0].Devices, groups[0].Devices[0])
	if err := ValidateNodeGroups("nodeGroups", groups); err == nil || !strings.HasPrefix(err.Error(), `nodeGroups[0].devices[1].name: "gpu" is used by another entry`) {
		t.Errorf("two entries of one name: %v", err)
	}
}

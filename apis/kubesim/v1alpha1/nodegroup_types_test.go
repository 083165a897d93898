package v1alpha1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestNodeGroupsValidateNamesTheField(t *testing.T) {
	ok := func() []NodeGroup {
		return []NodeGroup{{Count: 2}, {Name: "worker", Count: 3, Labels: map[string]string{"zone": "z-${index}"},
			Taints: []corev1.Taint{{Key: "dedicated", Value: "w", Effect: corev1.TaintEffectNoSchedule}}}}
	}
	for _, tc := range []struct {
		change func([]NodeGroup)
		want   string
	}{
		{func(g []NodeGroup) { g[1].Name = "" }, `nodeGroups[1].name: "" is used twice (only one group may go without a name)`},
		{func(g []NodeGroup) { g[1].Name = "Worker_1" }, `nodeGroups[1].name: "Worker_1" is not a DNS label`},
		{func(g []NodeGroup) { g[1].Name = "node" }, `nodeGroups[1].name: "node" is how the unnamed group's nodes are labelled`},
		{func(g []NodeGroup) { g[1].Count = -1 }, "nodeGroups[1].count: must be between 0 and 1000000, got -1"},
		{func(g []NodeGroup) { g[0].Count = MaxNodes + 1 }, "nodeGroups[0].count: must be between 0 and 1000000, got 1000001"},
		{func(g []NodeGroup) { g[1].Labels["zone"] = "z ${index}" }, `nodeGroups[1].labels.zone: "z ${index}" is not a label value`},
		{func(g []NodeGroup) { g[1].Labels["zone"] = strings.Repeat("z", 63) + "${index}" }, "nodeGroups[1].labels.zone"},
		{func(g []NodeGroup) { g[1].Labels["bad key!"] = "x" }, `nodeGroups[1].labels: "bad key!" is not a label key`},
		{func(g []NodeGroup) { g[1].Labels[NodeGroupLabel] = "x" }, "nodeGroups[1].labels.kubesim.io/node-group: kubesim sets it"},
		{func(g []NodeGroup) { g[1].Taints[0].Effect = "Sometimes" }, `nodeGroups[1].taints[0].effect: "Sometimes" is not an effect`},
		{func(g []NodeGroup) { g[1].Taints[0].Key = "" }, `nodeGroups[1].taints[0].key: "" is not a taint key`},
		{func(g []NodeGroup) { g[0].Capacity = corev1.ResourceList{"cpu": resource.MustParse("-1")} }, "nodeGroups[0].capacity.cpu: must not be negative"},
	} {
		groups := ok()
		if err := ValidateNodeGroups("nodeGroups", groups); err != nil {
			t.Fatalf("valid groups refused: %v", err)
		}
		tc.change(groups)
		err := ValidateNodeGroups("nodeGroups", groups)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want an error starting %q", err, tc.want)
		}
	}
}

// nodes: N (and nodeTemplate) is the shorthand for one unnamed group; with
// nodeGroups it is an error rather than a guess which one wins. Defaulting
// leaves the groups as written: cluster.yaml keeps what the user declared.
func TestClusterNodeGroups(t *testing.T) {
	c := &Cluster{ClusterSpec: ClusterSpec{Nodes: 3, NodeTemplate: "n.yaml"}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.NodeGroups = []NodeGroup{{Name: "a", Count: 1}, {Name: "b", Count: 2}}
	want := "nodeGroups: set nodeGroups or nodes and nodeTemplate (--nodes, --node-template), not both"
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("nodes and nodeGroups: %v, want %q", err, want)
	}
	c.Nodes = 0
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("nodeTemplate and nodeGroups: %v, want %q", err, want)
	}
	c = &Cluster{ClusterSpec: ClusterSpec{NodeGroups: []NodeGroup{{Name: "a", Count: 1}, {Count: 0, Labels: map[string]string{"x": "${index}"}}}}}
	c.SetDefaults()
	if len(c.NodeGroups) != 2 || c.NodeGroups[1].Template != "" || c.NodeGroups[1].Labels["x"] != "${index}" || c.Nodes != 0 {
		t.Errorf("SetDefaults changed the groups: %+v, nodes %d", c.NodeGroups, c.Nodes)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("nodeGroups alone: %v", err)
	}
	c.NodeGroups[1].Count = -5
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "nodeGroups[1].count:") {
		t.Errorf("a bad group: %v, want nodeGroups[1].count: …", err)
	}
}

func TestNodeGroupNames(t *testing.T) {
	unnamed, worker := &NodeGroup{}, &NodeGroup{Name: "worker", Labels: map[string]string{"zone": "z${index}", "pool": "p"}}
	if unnamed.NodeName(7) != "node-000007" || worker.NodeName(12) != "worker-12" {
		t.Errorf("names: %s %s", unnamed.NodeName(7), worker.NodeName(12))
	}
	for _, tc := range []struct {
		g    *NodeGroup
		name string
		i    int
		ok   bool
	}{
		{unnamed, "node-000007", 7, true},
		{unnamed, "node-7", 0, false},
		{unnamed, "worker-7", 0, false},
		{worker, "worker-12", 12, true},
		{worker, "worker-012", 0, false},
		{worker, "worker-1-0", 0, false},
		{worker, "worker--1", 0, false},
		{worker, "node-000001", 0, false},
	} {
		if i, ok := tc.g.NodeIndex(tc.name); ok != tc.ok || (ok && i != tc.i) {
			t.Errorf("group %q: NodeIndex(%q) = %d, %v; want %d, %v", tc.g.Name, tc.name, i, ok, tc.i, tc.ok)
		}
	}
	labels := worker.NodeLabels(4)
	if labels["zone"] != "z4" || labels["pool"] != "p" || labels[NodeGroupLabel] != "worker" || unnamed.NodeLabels(0)[NodeGroupLabel] != "node" {
		t.Errorf("NodeLabels(4) = %v, unnamed %v", labels, unnamed.NodeLabels(0))
	}
}

package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeGroup is a set of alike nodes: in a Cluster file (nodeGroups), in a
// scenario's cluster and in kubesimtest. The group without a name makes
// node-000000, node-000001, …; a group called worker makes worker-0,
// worker-1, … Every node is labelled kubesim.io/node-group with its
// group's name ("node" for the unnamed group).
type NodeGroup struct {
	// Name is a DNS label; empty for the unnamed group.
	Name string `json:"name,omitempty"`
	// Count is how many nodes the group has.
	Count int `json:"count"`
	// Labels are added to every node of the group; a value may use ${index},
	// the node's number in its group (zone-${index}).
	Labels map[string]string `json:"labels,omitempty"`
	// Capacity sets resources of every node, capacity and allocatable both.
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Taints are added to every node of the group.
	Taints []corev1.Taint `json:"taints,omitempty"`
	// Template is the path of a v1 Node manifest the nodes are stamped
	// from (in a scenario, relative to its file); default kubesim's node
	// (`kubesim get node-template`).
	Template string `json:"template,omitempty"`
	// Devices are the DRA devices of every node of the group, published as
	// ResourceSlices when the nodes are made.
	Devices []Devices `json:"devices,omitempty"`
}

// NodeGroupLabel names each node's group.
const NodeGroupLabel = "kubesim.io/node-group"

// unnamedGroupLabel is the unnamed group's value of NodeGroupLabel.
const unnamedGroupLabel = "node"

// LabelValue is the group's value of NodeGroupLabel.
func (g *NodeGroup) LabelValue() string {
	if g.Name == "" {
		return unnamedGroupLabel
	}
	return g.Name
}

// NodeName is the name of the group's i-th node.
func (g *NodeGroup) NodeName(i int) string {
	if g.Name == "" {
		return fmt.Sprintf("node-%06d", i)
	}
	return g.Name + "-" + strconv.Itoa(i)
}

// NodeIndex is the number in the group of the node called name, if the
// group names a node so.
func (g *NodeGroup) NodeIndex(name string) (int, bool) {
	prefix := g.Name + "-"
	if g.Name == "" {
		prefix = "node-"
	}
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	// Only the name NodeName gives: not node-7 or worker-07.
	return i, err == nil && i >= 0 && g.NodeName(i) == name
}

// NodeLabels are the labels the group puts on its i-th node: its own,
// ${index} replaced, and NodeGroupLabel.
func (g *NodeGroup) NodeLabels(i int) map[string]string {
	labels := make(map[string]string, len(g.Labels)+1)
	for k, v := range g.Labels {
		labels[k] = strings.ReplaceAll(v, "${index}", strconv.Itoa(i))
	}
	labels[NodeGroupLabel] = g.LabelValue()
	return labels
}

// ValidateNodeGroups checks the groups listed at path (nodeGroups); an
// error names the field at fault (nodeGroups[1].count: …).
func ValidateNodeGroups(path string, groups []NodeGroup) error {
	names := map[string]bool{}
	for i := range groups {
		g := &groups[i]
		at := fmt.Sprintf("%s[%d]", path, i)
		if names[g.Name] {
			return fmt.Errorf("%s.name: %q is used twice (only one group may go without a name)", at, g.Name)
		}
		names[g.Name] = true
		if err := g.validate(); err != nil {
			return fmt.Errorf("%s.%w", at, err)
		}
	}
	return nil
}

// validate checks one group; the error starts with the field's name.
func (g *NodeGroup) validate() error {
	if g.Name != "" {
		if errs := validation.IsDNS1123Label(g.Name); len(errs) > 0 {
			return fmt.Errorf("name: %q is not a DNS label (at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit)", g.Name)
		}
		if g.Name == unnamedGroupLabel {
			return fmt.Errorf("name: %q is how the unnamed group's nodes are labelled (%s=%s); choose another name", g.Name, NodeGroupLabel, unnamedGroupLabel)
		}
	}
	if err := CheckNodeCount(g.Count); err != nil {
		return fmt.Errorf("count: %w", err)
	}
	// The highest index makes the longest values.
	last := strconv.Itoa(max(g.Count-1, 0))
	for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
		if k == NodeGroupLabel {
			return fmt.Errorf("labels.%s: kubesim sets it to the group's name; leave it out", k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("labels: %q is not a label key: %s", k, strings.Join(errs, "; "))
		}
		v := g.Labels[k]
		if errs := validation.IsValidLabelValue(strings.ReplaceAll(v, "${index}", last)); len(errs) > 0 {
			return fmt.Errorf("labels.%s: %q is not a label value (${index} is the node's number): %s", k, v, strings.Join(errs, "; "))
		}
	}
	for j, t := range g.Taints {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("taints[%d].key: %q is not a taint key: %s", j, t.Key, strings.Join(errs, "; "))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("taints[%d].effect: %q is not an effect; use NoSchedule, PreferNoSchedule or NoExecute", j, t.Effect)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.Capacity)) {
		if q := g.Capacity[name]; q.Sign() < 0 {
			return fmt.Errorf("capacity.%s: must not be negative, got %s", name, q.String())
		}
	}
	return validateDevices(g.Devices)
}

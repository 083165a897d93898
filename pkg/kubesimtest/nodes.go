package kubesimtest

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// A NodeOption shapes the nodes of Nodes or NodeGroup.
type NodeOption func(*nodeGroup) error

// nodeGroup is one group of nodes as the NodeOptions ask for it: the
// Cluster file's node group, the template it names, and labels whose
// values go round its nodes.
type nodeGroup struct {
	v1alpha1.NodeGroup
	template *corev1.Node // nil for kubesim's default node
	spread   []spreadLabel
}

type spreadLabel struct {
	key    string
	values []string
}

// Nodes gives the cluster n simulated nodes, node-000000 … node-<n-1>,
// Ready before Start returns: the unnamed node group. Give it once; for
// nodes of another kind, add a NodeGroup.
func Nodes(n int, opts ...NodeOption) Option {
	return func(s *settings) error {
		return s.addGroup("kubesimtest.Nodes", "", n, opts)
	}
}

// NodeGroup gives the cluster a group of n simulated nodes called name-0 …
// name-<n-1> (name a DNS label), each labelled kubesim.io/node-group=name,
// Ready before Start returns. `kubesim scale node --group name` scales it.
func NodeGroup(name string, n int, opts ...NodeOption) Option {
	return func(s *settings) error {
		what := fmt.Sprintf("kubesimtest.NodeGroup(%q)", name)
		if name == "" {
			return fmt.Errorf("%s: empty name; use Nodes for the unnamed group (node-000000, …)", what)
		}
		return s.addGroup(what, name, n, opts)
	}
}

func (s *settings) addGroup(what, name string, n int, opts []NodeOption) error {
	if slices.ContainsFunc(s.groups, func(g *nodeGroup) bool { return g.Name == name }) {
		if name == "" {
			return fmt.Errorf("%s: given twice; give the unnamed group's nodes in one call (NodeGroup adds others)", what)
		}
		return fmt.Errorf("%s: given twice; give a group's nodes in one call", what)
	}
	if n < 0 {
		return fmt.Errorf("%s: %d nodes; want 0 or more", what, n)
	}
	g := &nodeGroup{NodeGroup: v1alpha1.NodeGroup{Name: name, Count: n}}
	for _, opt := range opts {
		if err := opt(g); err != nil {
			return err
		}
	}
	s.groups = append(s.groups, g)
	return nil
}

// Template stamps the nodes from node (its name is replaced) instead of
// kubesim's default node (`kubesim get node-template`); Label, Taint and
// Capacity apply on top of it.
func Template(node *corev1.Node) NodeOption {
	return func(g *nodeGroup) error {
		if node == nil {
			return fmt.Errorf("kubesimtest.Template: nil node; pass a *corev1.Node or leave Template out")
		}
		g.template = node.DeepCopy()
		return nil
	}
}

// Label puts a label on every node; "${index}" in value is the node's
// number in its group.
func Label(key, value string) NodeOption {
	return func(g *nodeGroup) error {
		if key == "" {
			return fmt.Errorf("kubesimtest.Label: empty key; want a label key such as topology.kubernetes.io/zone")
		}
		if g.Labels == nil {
			g.Labels = map[string]string{}
		}
		g.Labels[key] = value
		return nil
	}
}

// Spread labels the nodes in turn with the values: Spread(zone, "a", "b",
// "c") puts node-000000 in a, node-000001 in b, node-000002 in c,
// node-000003 in a again — what topology-spread tests need.
func Spread(key string, values ...string) NodeOption {
	return func(g *nodeGroup) error {
		if key == "" || len(values) == 0 {
			return fmt.Errorf("kubesimtest.Spread(%q): want a label key and at least one value, such as Spread(\"topology.kubernetes.io/zone\", \"a\", \"b\")", key)
		}
		g.spread = append(g.spread, spreadLabel{key, values})
		return nil
	}
}

// Taint taints every node.
func Taint(key, value string, effect corev1.TaintEffect) NodeOption {
	return func(g *nodeGroup) error {
		effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
		if key == "" || !slices.Contains(effects, effect) {
			return fmt.Errorf("kubesimtest.Taint(%q, %q, %q): want a key and an effect of NoSchedule, PreferNoSchedule or NoExecute", key, value, effect)
		}
		g.Taints = append(g.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
		return nil
	}
}

// Capacity sets a resource of every node, both capacity and allocatable:
// Capacity("cpu", "4"), Capacity("memory", "16Gi"), Capacity("pods", "20").
func Capacity(name corev1.ResourceName, quantity string) NodeOption {
	return func(g *nodeGroup) error {
		q, err := resource.ParseQuantity(quantity)
		if err != nil {
			return fmt.Errorf("kubesimtest.Capacity(%q, %q): not a quantity; want one such as 4, 500m or 16Gi", name, quantity)
		}
		if g.Capacity == nil {
			g.Capacity = corev1.ResourceList{}
		}
		g.Capacity[name] = q
		return nil
	}
}

// Devices gives every node of the group DRA devices, published as
// ResourceSlices of d.Driver (one pool per node) with a DeviceClass named
// after the driver, as the Cluster file's nodeGroups[].devices: for
// example Devices(v1alpha1.Devices{Driver: "gpu.example.com", Count: 8}).
// Give it once per kind of device.
func Devices(d v1alpha1.Devices) NodeOption {
	return func(g *nodeGroup) error {
		g.NodeGroup.Devices = append(g.NodeGroup.Devices, d)
		return nil
	}
}

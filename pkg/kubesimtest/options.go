package kubesimtest

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// An Option shapes the cluster Start makes. A bad option fails Start with
// one line naming it.
type Option func(*settings) error

// A NodeOption shapes the nodes of Nodes.
type NodeOption func(*nodeGroup) error

// nodeGroup is what the NodeOptions ask for: one template for all nodes,
// and labels whose values go round the nodes.
type nodeGroup struct {
	template *corev1.Node // nil for kubesim's default node
	// edits change the template: Label, Taint and Capacity. They are kept
	// until the config is written, which reads kubesim's default node from
	// the binary if Template gave none.
	edits  []func(*corev1.Node)
	spread []spreadLabel
}

type spreadLabel struct {
	key    string
	values []string
}

// node is the template the options ask for: Template's, or base (kubesim's
// default node) when none was given, edited; nil if neither was asked for.
func (g *nodeGroup) node(base func() (*corev1.Node, error)) (*corev1.Node, error) {
	if g.template == nil && len(g.edits) == 0 {
		return nil, nil
	}
	node := g.template.DeepCopy()
	if node == nil {
		var err error
		if node, err = base(); err != nil {
			return nil, err
		}
	}
	for _, edit := range g.edits {
		edit(node)
	}
	return node, nil
}

// settings is what the options ask for; it becomes kubesim's Cluster file.
type settings struct {
	nodes     int
	group     nodeGroup
	nodesSet  bool
	stageSet  string
	stages    []string // YAML applied after start
	failure   *nodeFailure
	desched   *descheduler
	noDPDB    bool
	extraArgs map[string][]string
}

type nodeFailure struct{ notReadyAfter, evictAfter time.Duration }

type descheduler struct {
	interval time.Duration
	profiles []string
}

// Nodes gives the cluster n simulated nodes, node-000000 … node-<n-1>,
// Ready before Start returns. A cluster has one group of nodes, stamped
// from one template (Spread varies labels among them): give Nodes once.
func Nodes(n int, opts ...NodeOption) Option {
	return func(s *settings) error {
		if s.nodesSet {
			return fmt.Errorf("kubesimtest.Nodes: given twice; a cluster has one group of nodes, so give them all in one call")
		}
		if n < 0 {
			return fmt.Errorf("kubesimtest.Nodes: %d nodes; want 0 or more", n)
		}
		s.nodesSet, s.nodes = true, n
		for _, opt := range opts {
			if err := opt(&s.group); err != nil {
				return err
			}
		}
		return nil
	}
}

// Template stamps the nodes from node (its name is replaced) instead of
// kubesim's default node; give it first, as it replaces what options
// before it set.
func Template(node *corev1.Node) NodeOption {
	return func(g *nodeGroup) error {
		if node == nil {
			return fmt.Errorf("kubesimtest.Template: nil node; pass a *corev1.Node or leave Template out")
		}
		g.template, g.edits = node.DeepCopy(), nil
		return nil
	}
}

// Label puts a label on every node.
func Label(key, value string) NodeOption {
	return func(g *nodeGroup) error {
		if key == "" {
			return fmt.Errorf("kubesimtest.Label: empty key; want a label key such as topology.kubernetes.io/zone")
		}
		g.edits = append(g.edits, func(n *corev1.Node) {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[key] = value
		})
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
		g.edits = append(g.edits, func(n *corev1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
		})
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
		g.edits = append(g.edits, func(n *corev1.Node) {
			if n.Status.Capacity == nil {
				n.Status.Capacity = corev1.ResourceList{}
			}
			if n.Status.Allocatable == nil {
				n.Status.Allocatable = corev1.ResourceList{}
			}
			n.Status.Capacity[name], n.Status.Allocatable[name] = q, q
		})
		return nil
	}
}

// StageSet chooses the built-in stage set: "fast" (kubesim's default: pods
// Running at once) or "realistic" (creation and init containers take 1–3 s).
func StageSet(name string) Option {
	return func(s *settings) error {
		if name != "fast" && name != "realistic" {
			return fmt.Errorf("kubesimtest.StageSet(%q): want fast or realistic", name)
		}
		s.stageSet = name
		return nil
	}
}

// Stages applies Stage manifests (kwok.x-k8s.io/v1alpha1 YAML, several
// documents each if you like) once the cluster is up, before Start returns.
// The simulator learns of them from its watch, a moment later.
func Stages(manifests ...string) Option {
	return func(s *settings) error {
		s.stages = append(s.stages, manifests...)
		return nil
	}
}

// NodeFailure makes node failures show within a test: a node whose kubelet
// stopped (StopNode) turns NotReady after notReadyAfter, and its pods are
// evicted evictAfter later (whole seconds; 0 evicts at once). Upstream's
// defaults are 50s and 300s.
func NodeFailure(notReadyAfter, evictAfter time.Duration) Option {
	return func(s *settings) error {
		if notReadyAfter < 2*time.Second {
			return fmt.Errorf("kubesimtest.NodeFailure: notReadyAfter %s is too short for Lease renewals; want 2s or more", notReadyAfter)
		}
		if evictAfter < 0 || evictAfter%time.Second != 0 {
			return fmt.Errorf("kubesimtest.NodeFailure: evictAfter %s; want whole seconds such as 2s (0 evicts at once)", evictAfter)
		}
		s.failure = &nodeFailure{notReadyAfter, evictAfter}
		return nil
	}
}

// Descheduler runs sigs.k8s.io/descheduler as a component every interval
// with the named profiles (those `kubesim deschedule --profile` takes).
func Descheduler(interval time.Duration, profiles ...string) Option {
	return func(s *settings) error {
		if interval <= 0 || len(profiles) == 0 {
			return fmt.Errorf("kubesimtest.Descheduler: want a positive interval and at least one profile, such as Descheduler(5*time.Second, \"TopologyAndDuplicates\")")
		}
		s.desched = &descheduler{interval, profiles}
		return nil
	}
}

// WithoutDPDBController leaves out the DistributedPodDisruptionBudget
// controller (on by default; its CRD is installed all the same).
func WithoutDPDBController() Option {
	return func(s *settings) error {
		s.noDPDB = true
		return nil
	}
}

// ExtraArgs adds upstream flags to an upstream component's command line
// (kube-apiserver, kube-controller-manager or kube-scheduler); kubesim
// checks them against the component's flags.
func ExtraArgs(component string, args ...string) Option {
	return func(s *settings) error {
		components := []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}
		if !slices.Contains(components, component) {
			return fmt.Errorf("kubesimtest.ExtraArgs(%q): want kube-apiserver, kube-controller-manager or kube-scheduler", component)
		}
		if s.extraArgs == nil {
			s.extraArgs = map[string][]string{}
		}
		s.extraArgs[component] = append(s.extraArgs[component], args...)
		return nil
	}
}

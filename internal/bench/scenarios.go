package bench

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/internal/scale"
)

// Size is how much a scenario does.
type Size struct {
	Nodes, Pods int
	// Hold is how long the nodes scenario then watches its nodes stay Ready.
	Hold time.Duration
}

// Scenario is one benchmark, run in a cluster made for it.
type Scenario struct {
	Measure func(ctx context.Context, c *Cluster, s Size) ([]Phase, error)
	// Default is its size unless told.
	Default Size
	// WithoutKubeletSim leaves the simulator out of the cluster.
	WithoutKubeletSim bool
	// FloorSize is what the floor must measure for the scenario's phases
	// to be set against it; nil for the floor itself.
	FloorSize func(Size) Size
}

// usualSize is the size of every benchmark but scale, unless told.
var usualSize = Size{Nodes: 1000, Pods: 10000}

// The benchmarks of `kubesim bench`.
var (
	NodesScenario      = Scenario{Measure: Nodes, Default: usualSize, FloorSize: nodesOnly}
	PodsScenario       = Scenario{Measure: PodsOnOneNode, Default: usualSize, FloorSize: podsOnly}
	DeploymentScenario = Scenario{Measure: Deployment, Default: usualSize, FloorSize: nodesAndPods}
	FloorScenario      = Scenario{Measure: Floor, WithoutKubeletSim: true, Default: usualSize}
	// ScaleScenario is KWOK's promise ("1k nodes and 100k pods") and more:
	// 10,000 nodes, 100,000 pods, held for 10 minutes.
	ScaleScenario = Scenario{Measure: Scale, Default: Size{Nodes: 10000, Pods: 100000, Hold: 10 * time.Minute}, FloorSize: nodesAndPods}
)

func nodesOnly(s Size) Size    { return Size{Nodes: s.Nodes} }
func podsOnly(s Size) Size     { return Size{Pods: s.Pods} }
func nodesAndPods(s Size) Size { return Size{Nodes: s.Nodes, Pods: s.Pods} }

// The floor's phases, which the scenarios' phases name as their floor.
const (
	floorPodsCreated  = "floor: pods created (nothing else)"
	floorPodsDeleted  = "floor: pods deleted at once and gone"
	floorNodesCreated = "floor: nodes created (nothing else)"
)

// Nodes measures s.Nodes simulated nodes created and Ready (and
// schedulable), then, if s.Hold is set, the cost of keeping them so.
func Nodes(ctx context.Context, c *Cluster, s Size) ([]Phase, error) {
	p, err := c.Measure("nodes created and Ready", s.Nodes, func() error {
		return scale.Nodes(ctx, c.Client, scale.Options{Replicas: s.Nodes, Wait: 10 * time.Minute})
	})
	p.FloorOf = floorNodesCreated
	if err != nil || s.Hold <= 0 {
		return []Phase{p}, err
	}
	held, err := holdNodes(ctx, c, s.Nodes, s.Hold)
	return []Phase{p, held}, err
}

// holdNodes watches the cluster's scaled nodes for hold and fails if any
// stops being Ready: the steady state (Lease renewals) must keep them so.
// Its phase's CPU is the standing cost of that many nodes.
func holdNodes(ctx context.Context, c *Cluster, n int, hold time.Duration) (Phase, error) {
	return c.Measure(fmt.Sprintf("nodes held Ready for %s", hold), n, func() error {
		return holdSteady(ctx, c, hold, nil)
	})
}

// holdSteady checks every second for hold that every node is Ready and, if
// pods is set, that it still finds each of the same pods Running.
func holdSteady(ctx context.Context, c *Cluster, hold time.Duration, pods *podCounter) error {
	factory := informers.NewSharedInformerFactory(c.Client, 0)
	lister := factory.Core().V1().Nodes().Lister()
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	var held map[types.UID]bool
	if pods != nil {
		held = map[types.UID]bool{}
		for _, p := range pods.lister() {
			held[p.UID] = true
		}
	}
	end := time.Now().Add(hold)
	for time.Now().Before(end) {
		into := (hold - time.Until(end)).Round(time.Second)
		nodes, err := lister.List(labels.Everything())
		if err != nil {
			return err
		}
		for _, node := range nodes {
			if !scale.IsReady(node) {
				return fmt.Errorf("node %s stopped being Ready %s into the hold", node.Name, into)
			}
		}
		if pods != nil {
			current := pods.lister()
			for _, p := range current {
				if !held[p.UID] || p.Status.Phase != corev1.PodRunning {
					return fmt.Errorf("pod %s is %s (a replacement, or no longer Running) %s into the hold", p.Name, p.Status.Phase, into)
				}
			}
			if len(current) != len(held) {
				return fmt.Errorf("%d of %d pods left %s into the hold", len(held)-len(current), len(held), into)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return nil
}

// bigNodeName is the node PodsOnOneNode packs its pods onto.
const bigNodeName = "node-000000"

// PodsOnOneNode measures s.Pods pods bound by name to one node going
// Running, then being deleted until gone.
func PodsOnOneNode(ctx context.Context, c *Cluster, s Size) ([]Phase, error) {
	n := s.Pods
	// One node with room (and addresses) for every pod: a /16 of the
	// cluster's pod range, 10.0.0.0/8 by default.
	tmpl := scale.DefaultTemplate()
	tmpl.Spec.PodCIDR, tmpl.Spec.PodCIDRs = "10.32.0.0/16", []string{"10.32.0.0/16"}
	pods := resource.MustParse(fmt.Sprint(n + 100))
	tmpl.Status.Capacity[corev1.ResourcePods], tmpl.Status.Allocatable[corev1.ResourcePods] = pods, pods
	if err := scale.Nodes(ctx, c.Client, scale.Options{Replicas: 1, Template: tmpl, Wait: time.Minute}); err != nil {
		return nil, err
	}
	counter := newPodCounter(ctx, c.Client)
	defer counter.stop()
	up, err := c.Measure("pods (nodeName set) created and Running", n, func() error {
		if err := createPods(ctx, c, n, onBigNode); err != nil {
			return err
		}
		return counter.waitFor(ctx, 10*time.Minute, "pods Running", running(n))
	})
	if err != nil {
		return nil, err
	}
	down, err := c.Measure("pods deleted and gone", n, func() error {
		if err := deletePods(ctx, c, n, metav1.DeleteOptions{}); err != nil {
			return err
		}
		return counter.waitFor(ctx, 10*time.Minute, "pods gone", gone)
	})
	up.FloorOf, down.FloorOf = floorPodsCreated, floorPodsDeleted
	return []Phase{up, down}, err
}

// Deployment measures a Deployment of s.Pods pods scheduled by the real
// scheduler onto s.Nodes simulated nodes, until all are Running.
func Deployment(ctx context.Context, c *Cluster, s Size) ([]Phase, error) {
	replicas := s.Pods
	nodePhase, err := Nodes(ctx, c, Size{Nodes: s.Nodes})
	if err != nil {
		return nil, err
	}
	counter := newPodCounter(ctx, c.Client)
	defer counter.stop()
	up, err := c.Measure("deployment pods scheduled and Running", replicas, func() error {
		if _, err := c.Client.AppsV1().Deployments(Namespace).Create(ctx, benchDeployment(replicas), metav1.CreateOptions{}); err != nil {
			return err
		}
		return counter.waitFor(ctx, podsWait(replicas), "pods Running", running(replicas))
	})
	up.FloorOf = floorPodsCreated
	return append(nodePhase, up), err
}

// Scale measures a cluster at scale: s.Nodes nodes Ready, s.Pods pods
// bound by name across them (round robin) until Running, both held steady
// for s.Hold (no node leaving Ready, no pod leaving Running or replaced),
// then the pods deleted until gone. The scheduler's part is the Deployment
// benchmark's: at 10,000 nodes it, not the rest, sets the pace. Each phase
// reports every component's peak RSS.
func Scale(ctx context.Context, c *Cluster, s Size) ([]Phase, error) {
	phases, err := Nodes(ctx, c, Size{Nodes: s.Nodes})
	if err != nil {
		return phases, err
	}
	counter := newPodCounter(ctx, c.Client)
	defer counter.stop()
	for _, step := range []struct {
		name, floorOf string
		run           func() error
	}{
		{"pods (nodeName set, spread over the nodes) created and Running", floorPodsCreated, func() error {
			if err := createPods(ctx, c, s.Pods, func(i int) string { return scale.NodeName(i % s.Nodes) }); err != nil {
				return err
			}
			return counter.waitFor(ctx, podsWait(s.Pods), "pods Running", running(s.Pods))
		}},
		{fmt.Sprintf("nodes Ready and pods Running, held for %s", s.Hold), "", func() error {
			return holdSteady(ctx, c, s.Hold, counter)
		}},
		{"pods deleted and gone", floorPodsDeleted, func() error {
			if err := deletePods(ctx, c, s.Pods, metav1.DeleteOptions{}); err != nil {
				return err
			}
			return counter.waitFor(ctx, podsWait(s.Pods), "pods gone", gone)
		}},
	} {
		p, err := c.Measure(step.name, s.Pods, step.run)
		if err != nil {
			return phases, err
		}
		p.FloorOf = step.floorOf
		phases = append(phases, p)
	}
	return phases, nil
}

// podsWait bounds the wait for n pods: 30 minutes, and more for more than
// 50,000 (20 pods/s, a quarter of what this 2-core machine does).
func podsWait(n int) time.Duration {
	return max(30*time.Minute, time.Duration(n)*50*time.Millisecond)
}

func benchDeployment(replicas int) *appsv1.Deployment {
	labels := map[string]string{"app": "bench"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       benchPod("", "", nil).Spec,
			},
		},
	}
}

// Floor measures the control plane alone, with no simulator in the
// cluster: s.Pods pods created (bound to one node), the same pods deleted
// at once, and s.Nodes nodes created; a part whose size is 0 is left out.
// Every simulated pod or node needs these writes and more, so these times
// are the least any simulator can take for the same objects on this machine.
func Floor(ctx context.Context, c *Cluster, s Size) ([]Phase, error) {
	var phases []Phase
	if n := s.Pods; n > 0 {
		if err := scale.Nodes(ctx, c.Client, scale.Options{Replicas: 1}); err != nil {
			return nil, err
		}
		counter := newPodCounter(ctx, c.Client)
		defer counter.stop()
		created, err := c.Measure(floorPodsCreated, n, func() error {
			return createPods(ctx, c, n, onBigNode)
		})
		if err != nil {
			return nil, err
		}
		phases = append(phases, created)
		// Grace 0: one write per pod, where a graceful delete takes two.
		deleted, err := c.Measure(floorPodsDeleted, n, func() error {
			if err := deletePods(ctx, c, n, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
				return err
			}
			return counter.waitFor(ctx, 10*time.Minute, "pods gone", gone)
		})
		if err != nil {
			return phases, err
		}
		phases = append(phases, deleted)
	}
	if nodes := s.Nodes; nodes > 0 {
		// scale.Nodes counts the node the pods went to among the replicas.
		nodesCreated, err := c.Measure(floorNodesCreated, nodes, func() error {
			return scale.Nodes(ctx, c.Client, scale.Options{Replicas: nodes})
		})
		if err != nil {
			return phases, err
		}
		phases = append(phases, nodesCreated)
	}
	return phases, nil
}

// onBigNode puts every pod on bigNodeName.
func onBigNode(int) string { return bigNodeName }

// createPods creates pod-000000 …, n of them, pod i bound to node(i).
func createPods(ctx context.Context, c *Cluster, n int, node func(i int) string) error {
	return forEachPod(ctx, n, func(ctx context.Context, i int) error {
		_, err := c.Client.CoreV1().Pods(Namespace).Create(ctx, benchPod(podName(i), node(i), nil), metav1.CreateOptions{})
		return err
	})
}

// deletePods deletes the pods createPods made.
func deletePods(ctx context.Context, c *Cluster, n int, opts metav1.DeleteOptions) error {
	return forEachPod(ctx, n, func(ctx context.Context, i int) error {
		return c.Client.CoreV1().Pods(Namespace).Delete(ctx, podName(i), opts)
	})
}

// forEachPod calls do for pods 0 … n-1, workers at a time. The first error
// cancels the ctx the others get, stops handing out pods and is returned;
// if ctx ends first, its cause is returned.
func forEachPod(ctx context.Context, n int, do func(ctx context.Context, i int) error) error {
	g, groupCtx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range n {
		if groupCtx.Err() != nil {
			break
		}
		g.Go(func() error { return do(groupCtx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return context.Cause(ctx) // ended before every pod was handed out
}

func podName(i int) string { return fmt.Sprintf("pod-%06d", i) }

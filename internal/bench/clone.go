package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/scale"
	"github.com/kubesim/kubesim/internal/snapshot/export"
)

// CloneOptions say where and how big to run the clone benchmark.
type CloneOptions struct {
	Home string
	Size Size // nodes and pods of the source
	Out  io.Writer
	Log  io.Writer
}

// PodsPerNode is the most pods the default node holds (its pods capacity).
const PodsPerNode = 110

// replicaSetSize is how many of the source's pods one ReplicaSet owns.
const replicaSetSize = 100

// The clone benchmark's phases.
const (
	floorNodesAndPods = "floor: nodes and pods bound across them created (nothing else)"
	phaseExport       = "source exported (snapshot export; CPU: the source's components)"
	phaseClone        = "cloned (create cluster --from): nodes Ready, pods Running"
	// The simulator's own cost for the same nodes and pods: the source's
	// nodes made Ready and its pods, created bound, Running. A clone makes
	// the same writes and more (its pods are the source's, owned), so this
	// is a second, fairer yardstick than the floor, which has no simulator.
	phaseSimulated = "simulated: nodes Ready and pods bound across them Running (the source, made directly)"
)

// Clone measures `create cluster --from` against its floor, in one run:
//
//   - the floor: the control plane alone (no simulator) creating s.Nodes
//     nodes and s.Pods pods bound across them, in a fresh cluster;
//   - the source: a kubesim cluster of s.Nodes nodes and s.Pods Running
//     pods bound round robin, owned by ReplicaSets of 100; its making up to
//     pods Running (not yet owned) is timed as the simulator's own cost
//     for those objects;
//   - the export of the source to a file, with the CPU each of the
//     source's components spent meanwhile (its API server's above all);
//   - the clone of that file into a new cluster, the source deleted first
//     so both are timed on an otherwise idle machine, until its nodes are
//     Ready and its pods Running, set against the floor and the simulated.
func Clone(ctx context.Context, o CloneOptions) error {
	s := o.Size
	floor, err := cloneFloor.measure(ctx, RunOptions{Home: o.Home}, "-floor", s, false)
	Report(o.Out, floor, nil)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kubesim-bench-clone-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "source.yaml")

	src, err := NewCluster(ctx, o.Home, &v1alpha1.Cluster{Name: fmt.Sprintf("bench-%d-source", os.Getpid())}, io.Discard)
	if err != nil {
		return err
	}
	defer src.Delete(context.Background())
	fmt.Fprintf(o.Log, "Making the source: %d nodes, %d pods in ReplicaSets of %d\n", s.Nodes, s.Pods, replicaSetSize)
	counter := newPodCounter(ctx, src.Client)
	defer counter.stop()
	simulated, err := src.Measure(phaseSimulated, s.Nodes+s.Pods, func() error { return makeSourceRunning(ctx, src, counter, s) })
	if err != nil {
		return fmt.Errorf("making the source: %w", err)
	}
	simulated.FloorOf = floorNodesAndPods
	Report(o.Out, []Phase{simulated}, floor)
	if err := adoptSource(ctx, src, counter, s); err != nil {
		return fmt.Errorf("making the source: %w", err)
	}
	cfg, err := src.p.RESTConfig(src.Name)
	if err != nil {
		return err
	}
	var objects int
	exported, err := src.Measure(phaseExport, s.Nodes+s.Pods, func() error {
		r, err := export.Export(ctx, export.Options{Config: cfg, Source: src.Name})
		if err != nil {
			return err
		}
		objects = len(r.Objects)
		return r.WriteFile(file)
	})
	if err != nil {
		return err
	}
	Report(o.Out, []Phase{exported}, nil)
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "  the file: %d objects, %.1f MiB\n", objects, float64(info.Size())/(1<<20))
	if err := src.Delete(ctx); err != nil {
		return err
	}

	before := selfCPU()
	cloned, steps, err := measureClone(ctx, o, file, s)
	Report(o.Out, []Phase{cloned}, floor)
	// Not in the table, and not in the floor's: the create command's own
	// work, reading the file and making the pods ready for etcd.
	fmt.Fprintf(o.Out, "  and the create command itself (this process): %.1f CPU-s\n", (selfCPU() - before).Seconds())
	if err == nil {
		fmt.Fprintf(o.Out, "  %.2f× the simulated (%s: %d in %.2fs)\n",
			cloned.Took.Seconds()/simulated.Took.Seconds(), phaseSimulated, simulated.Count, simulated.Took.Seconds())
	}
	fmt.Fprintf(o.Out, "  its steps, as create reported them:\n")
	for line := range strings.Lines(steps) {
		if strings.Contains(line, "✓") || strings.Contains(line, " is ready (") {
			fmt.Fprintf(o.Out, "  %s", line)
		}
	}
	return err
}

// cloneFloor is the control plane alone creating the nodes and pods a
// clone makes, as fast as the load generator can.
var cloneFloor = Scenario{WithoutKubeletSim: true, Measure: func(ctx context.Context, c *Cluster, s Size) ([]Phase, error) {
	p, err := c.Measure(floorNodesAndPods, s.Nodes+s.Pods, func() error {
		if err := scale.Nodes(ctx, c.Client, scale.Options{Replicas: s.Nodes}); err != nil {
			return err
		}
		return createPods(ctx, c, s.Pods, roundRobin(s.Nodes))
	})
	return []Phase{p}, err
}}

// measureClone times `create cluster --from file` until the clone's nodes
// are Ready and its pods Running, and deletes the clone; steps is what
// create said meanwhile. Its CPU is that
// of the components running at the end (the controller-manager's run with
// its pod controllers held is in it: it was the same process).
func measureClone(ctx context.Context, o CloneOptions, file string, s Size) (Phase, string, error) {
	var steps strings.Builder
	p, cleanup, err := throwawayProvider(o.Home, &steps)
	if err != nil {
		return Phase{}, "", err
	}
	defer cleanup()
	name := fmt.Sprintf("bench-%d-clone", os.Getpid())
	c := &Cluster{Name: name, dir: clusterdir.For(o.Home, name).Path, p: p, cleanup: func() {}}
	defer p.Delete(context.Background(), name)
	phase, err := c.Measure(phaseClone, s.Nodes+s.Pods, func() error {
		return p.Create(ctx, &v1alpha1.Cluster{Name: name, From: file}, cluster.CreateOptions{Wait: podsWait(s.Pods)})
	})
	phase.FloorOf = floorNodesAndPods
	return phase, steps.String(), err
}

// makeCloneSource makes a cluster shaped as the clone's source: nodes,
// pods bound across them Running, each hundred owned by a ReplicaSet.
func makeCloneSource(ctx context.Context, c *Cluster, s Size) error {
	counter := newPodCounter(ctx, c.Client)
	defer counter.stop()
	if err := makeSourceRunning(ctx, c, counter, s); err != nil {
		return err
	}
	return adoptSource(ctx, c, counter, s)
}

// makeSourceRunning makes s.Nodes nodes and s.Pods pods bound across them
// round robin, and waits until the nodes are Ready and the pods Running.
func makeSourceRunning(ctx context.Context, c *Cluster, counter *podCounter, s Size) error {
	if err := scale.Nodes(ctx, c.Client, scale.Options{Replicas: s.Nodes, Wait: 10 * time.Minute}); err != nil {
		return err
	}
	node := roundRobin(s.Nodes)
	err := forEachPod(ctx, s.Pods, func(ctx context.Context, i int) error {
		_, err := c.Client.CoreV1().Pods(Namespace).Create(ctx, benchPod(podName(i), node(i), sourceLabels(i/replicaSetSize)), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return counter.waitFor(ctx, podsWait(s.Pods), "source pods Running", running(s.Pods))
}

// adoptSource has each hundred of the source's Running pods adopted by a
// ReplicaSet, and waits until every pod is owned. Running first: the
// ReplicaSets' controller then surely knows of every pod, and adopts
// rather than adds.
func adoptSource(ctx context.Context, c *Cluster, counter *podCounter, s Size) error {
	sets := (s.Pods + replicaSetSize - 1) / replicaSetSize
	err := forEachPod(ctx, sets, func(ctx context.Context, i int) error {
		replicas := min(replicaSetSize, s.Pods-i*replicaSetSize)
		_, err := c.Client.AppsV1().ReplicaSets(Namespace).Create(ctx, sourceReplicaSet(i, replicas), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	return counter.waitFor(ctx, podsWait(s.Pods), "source pods Running and owned", func(pods []*corev1.Pod) (int, bool) {
		n := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && metav1.GetControllerOf(p) != nil {
				n++
			}
		}
		return n, n >= s.Pods && len(pods) == s.Pods
	})
}

// selfCPU is the CPU this process has used, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func roundRobin(nodes int) func(int) string {
	return func(i int) string { return scale.NodeName(i % nodes) }
}

func sourceLabels(set int) map[string]string {
	return map[string]string{"app": fmt.Sprintf("app-%04d", set)}
}

// sourceReplicaSet owns the pods labelled for set: they exist first, so it
// adopts them rather than make its own.
func sourceReplicaSet(set, replicas int) *appsv1.ReplicaSet {
	labels := sourceLabels(set)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: labels["app"], Namespace: Namespace},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       benchPod("", "", nil).Spec,
			},
		},
	}
}

// Package scale creates and deletes simulated nodes in bulk, a node group
// at a time (node-000000, node-000001, … for the unnamed group; worker-0,
// worker-1, … for a group called worker), from a template, in parallel and
// idempotently. `kubesim create cluster`, `kubesim scale node` and
// scenarios all make their nodes here.
package scale

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/devices"
)

// workers is how many creates or deletes run at once.
const workers = 32

// NodeName is the name of the i-th node of the unnamed group.
func NodeName(i int) string { return (&v1alpha1.NodeGroup{}).NodeName(i) }

// Options say how many nodes a group should have and what they look like.
type Options struct {
	// Group names the nodes and gives them its labels, capacity and taints
	// on top of Template. Its Count and Template are not read here:
	// Replicas and Template are.
	Group    v1alpha1.NodeGroup
	Replicas int
	// Template is the node they are stamped from; nil: the default node.
	Template *corev1.Node
	// Wait is how long to wait for the nodes to be Ready; 0 does not wait.
	Wait     time.Duration
	Progress io.Writer
	Terminal bool // draw a progress bar rather than print lines
	// Gone, if set, is asked now and then while waiting: an error (the
	// cluster was stopped or deleted meanwhile) ends the wait with it.
	Gone func() error
	// CheckTotal, if set, is asked before any node is made or deleted
	// whether the cluster may have total nodes (the other groups' and
	// Replicas of this one); its error ends Nodes.
	CheckTotal func(total int) error
}

// PodsCapacity is the pods capacity o's nodes declare: the group's, else
// its template's; 0 if neither says.
func PodsCapacity(o Options) int64 {
	node := groupTemplate(o)
	if q, ok := node.Status.Capacity[corev1.ResourcePods]; ok {
		return q.Value()
	}
	return 0
}

// GroupOptions are the options that give g its Count nodes: its template
// read from its file (if it names one). An unreadable template's error
// names the file; the caller names the field.
func GroupOptions(g v1alpha1.NodeGroup) (Options, error) {
	o := Options{Group: g, Replicas: g.Count}
	if g.Template != "" {
		var err error
		if o.Template, err = ReadTemplate(g.Template); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Nodes makes the group's nodes 0 … Replicas-1 exist, deleting the group's
// nodes numbered higher, then waits until all of them are Ready.
func Nodes(ctx context.Context, client kubernetes.Interface, o Options) error {
	if err := v1alpha1.CheckNodeCount(o.Replicas); err != nil {
		return fmt.Errorf("replicas: %w", err)
	}
	g := &o.Group
	template := groupTemplate(o)
	existing, others, err := groupNodes(ctx, client, g)
	if err != nil {
		return err
	}
	if o.CheckTotal != nil {
		if err := o.CheckTotal(others + o.Replicas); err != nil {
			return err
		}
	}
	var create, remove []int
	for i := range o.Replicas {
		if existing[i] == nil {
			create = append(create, i)
		}
	}
	for i := range existing {
		if i >= o.Replicas {
			remove = append(remove, i)
		}
	}
	slices.Sort(remove)
	p := newProgress(o.Progress, o.Terminal)
	what := "creating nodes"
	if g.Name != "" {
		what += " of " + g.Name
	}
	var mu sync.Mutex
	if err := inParallel(ctx, what, create, g.NodeName, p, func(ctx context.Context, i int) error {
		node, err := client.CoreV1().Nodes().Create(ctx, Stamp(template, g.NodeName(i), g.NodeLabels(i)), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			node, err = client.CoreV1().Nodes().Get(ctx, g.NodeName(i), metav1.GetOptions{})
		}
		if err != nil {
			return err
		}
		mu.Lock()
		existing[i] = node
		mu.Unlock()
		return nil
	}); err != nil {
		return err
	}
	displaced, err := boundPods(ctx, client, remove, g.NodeName)
	if err != nil {
		return err
	}
	if err := inParallel(ctx, "deleting nodes", remove, g.NodeName, p, func(ctx context.Context, i int) error {
		err := client.CoreV1().Nodes().Delete(ctx, g.NodeName(i), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	if err := publishDevices(ctx, client, g, existing, o.Replicas, p); err != nil {
		return err
	}
	if len(remove) > 0 && o.Progress != nil {
		what := fmt.Sprintf("%d nodes", len(remove))
		if len(remove) == 1 {
			what = "1 node"
		}
		fmt.Fprintf(o.Progress, "deleted %s (%s), leaving %d; %s\n", what, span(remove, g.NodeName), o.Replicas, displacedPods(displaced))
	}
	if o.Wait <= 0 || o.Replicas == 0 {
		return nil
	}
	return waitReady(ctx, client, o, p)
}

// publishDevices makes the ResourceSlices of the group's nodes 0 …
// replicas-1 as its devices say, and deletes those of its other nodes,
// after making the DeviceClass of each driver the cluster lacks. Here,
// where the nodes are made, rather than in the simulator: the devices are
// the group's, which only the Cluster file knows, and they are published
// once, not watched for.
func publishDevices(ctx context.Context, client kubernetes.Interface, g *v1alpha1.NodeGroup, nodes map[int]*corev1.Node, replicas int, p *progress) error {
	existing, err := devices.Existing(ctx, client, g)
	if err != nil || len(g.Devices) == 0 {
		return err
	}
	if err := devices.EnsureClasses(ctx, client, g); err != nil {
		return err
	}
	var kept []*corev1.Node
	for i := range replicas {
		if nodes[i] != nil {
			kept = append(kept, nodes[i])
		}
	}
	changes := devices.Plan(g, kept, existing)
	indexes := make([]int, len(changes))
	for i := range indexes {
		indexes[i] = i
	}
	name := func(i int) string { return changes[i].Slice.Name }
	return inParallel(ctx, "publishing devices", indexes, name, p, func(ctx context.Context, i int) error {
		return devices.Write(ctx, client, changes[i])
	})
}

// boundPods counts the pods bound to the nodes of indexes that are not
// done (Succeeded or Failed) or going: the pods deleting those nodes
// displaces. One paged list, and none if there are no such nodes.
func boundPods(ctx context.Context, client kubernetes.Interface, indexes []int, name func(int) string) (int, error) {
	if len(indexes) == 0 {
		return 0, nil
	}
	nodes := map[string]bool{}
	for _, i := range indexes {
		nodes[name(i)] = true
	}
	n := 0
	err := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
	}).EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		pod := obj.(*corev1.Pod)
		if nodes[pod.Spec.NodeName] && pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("counting the pods on the nodes to delete: %w", err)
	}
	return n, nil
}

// displacedPods says what deleting nodes did to their pods.
func displacedPods(n int) string {
	switch n {
	case 0:
		return "no pods were bound to them"
	case 1:
		return "1 pod was bound to them: displaced (the pod garbage collector deletes it; its controller, if any, makes a new one)"
	}
	return fmt.Sprintf("%d pods were bound to them: displaced (the pod garbage collector deletes them; their controllers make new ones)", n)
}

// span names the nodes of sorted indexes: the one, or the first … the last.
func span(indexes []int, name func(int) string) string {
	if len(indexes) == 1 {
		return name(indexes[0])
	}
	return name(indexes[0]) + " … " + name(indexes[len(indexes)-1])
}

// groupTemplate is the node the group's nodes are stamped from: the
// template with the group's capacity and taints.
func groupTemplate(o Options) *corev1.Node {
	node := o.Template.DeepCopy()
	if node == nil {
		node = DefaultTemplate()
	}
	if len(o.Group.Capacity) > 0 {
		if node.Status.Capacity == nil {
			node.Status.Capacity = corev1.ResourceList{}
		}
		if node.Status.Allocatable == nil {
			node.Status.Allocatable = corev1.ResourceList{}
		}
		for k, v := range o.Group.Capacity {
			node.Status.Capacity[k], node.Status.Allocatable[k] = v.DeepCopy(), v.DeepCopy()
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, o.Group.Taints...)
	return node
}

// groupNodes returns the group's existing nodes by index, known by their
// names (nodes made before groups were labelled count too), and how many
// other nodes the cluster has.
func groupNodes(ctx context.Context, client kubernetes.Interface, g *v1alpha1.NodeGroup) (map[int]*corev1.Node, int, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, 0, fmt.Errorf("listing nodes: %w", err)
	}
	out := map[int]*corev1.Node{}
	others := 0
	for j, n := range list.Items {
		if i, ok := g.NodeIndex(n.Name); ok {
			out[i] = &list.Items[j]
		} else {
			others++
		}
	}
	return out, others, nil
}

// Stamp makes the node called name from the template, with extra labels
// and the labels a kubelet would give it.
func Stamp(template *corev1.Node, name string, extra map[string]string) *corev1.Node {
	node := template.DeepCopy()
	node.Name = name
	node.ResourceVersion, node.UID = "", ""
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	maps.Copy(node.Labels, extra)
	node.Labels["kubernetes.io/hostname"] = node.Name
	// A kubelet registers its node with the OS and architecture labels in
	// both their stable and beta forms; a missing beta one would cost each
	// node a patch by the node-lifecycle controller, which adds it.
	for stable, def := range map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"} {
		if node.Labels[stable] == "" {
			node.Labels[stable] = def
		}
		beta := "beta." + stable
		if node.Labels[beta] == "" {
			node.Labels[beta] = node.Labels[stable]
		}
	}
	return node
}

// inParallel runs do for every index, workers at a time, reporting
// progress as what. The first error cancels the ctx the others get, stops
// handing out indexes and is returned, naming its node (name(i)); if ctx
// ends first, its cause is returned.
func inParallel(ctx context.Context, what string, indexes []int, name func(int) string, p *progress, do func(ctx context.Context, i int) error) error {
	if len(indexes) == 0 {
		return nil
	}
	var done atomic.Int64
	g, groupCtx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, i := range indexes {
		if groupCtx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := do(groupCtx, i); err != nil {
				return fmt.Errorf("%s: %s: %w", what, name(i), err)
			}
			p.show(what, int(done.Add(1)), len(indexes))
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		err = context.Cause(ctx) // ended before every index was handed out
	}
	p.finish(what, int(done.Load()), len(indexes))
	return err
}

// waitReady waits until the group's nodes 0 … Replicas-1 are all Ready.
func waitReady(ctx context.Context, client kubernetes.Interface, o Options, p *progress) error {
	// Nodes take real work to be Ready: on a scaled clock (kubesim run's)
	// the wait is that much longer.
	n, timeout := o.Replicas, clusterclock.Stretch(o.Wait)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Nodes().Lister()
	factory.Start(ctx.Done())
	defer func() {
		cancel() // first: Shutdown waits for the informers, which stop on it
		factory.Shutdown()
	}()
	factory.WaitForCacheSync(ctx.Done())
	lastAsked := time.Now()
	for {
		if o.Gone != nil && time.Since(lastAsked) > time.Second {
			lastAsked = time.Now()
			if err := o.Gone(); err != nil {
				p.finish("nodes Ready", 0, n)
				return err
			}
		}
		nodes, _ := lister.List(labels.Everything())
		ready := 0
		for _, node := range nodes {
			if i, ok := o.Group.NodeIndex(node.Name); ok && i < n && IsReady(node) {
				ready++
			}
		}
		p.show("nodes Ready", ready, n)
		if ready == n {
			p.finish("nodes Ready", ready, n)
			return nil
		}
		select {
		case <-ctx.Done():
			p.finish("nodes Ready", ready, n)
			return fmt.Errorf("%d of %d nodes Ready after %s; is the kubelet simulator running (kubesim logs kubelet-sim)?", ready, n, timeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// IsReady reports whether a node is Ready and schedulable: its Ready
// condition True and the not-ready taint, which new nodes get at
// admission, removed by the node-lifecycle controller.
func IsReady(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			return false
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

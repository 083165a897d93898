package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/kubeversion"
	"github.com/kubesim/kubesim/internal/scale"
	"github.com/kubesim/kubesim/internal/snapshot"
	"github.com/kubesim/kubesim/internal/snapshot/clone"
	"github.com/kubesim/kubesim/internal/snapshot/etcdpods"
	"github.com/kubesim/kubesim/internal/snapshot/export"
)

// createClone makes a cluster a clone of c.From or c.FromContext. The
// source is read first, so a bad one makes nothing. The cluster is made
// with the controller-manager's pod controllers held, the snapshot loaded,
// and only then are they let go (the controller-manager alone starts
// again): they find each workload with its pods, as in the source, and
// have nothing to create or delete. A failure after the cluster was made
// deletes it, unless Retain.
func (p *Provider) createClone(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) (err error) {
	if c.From != "" && c.FromContext != "" {
		return errors.New("from and fromContext (--from, --from-context): give one source to clone")
	}
	objects, err := p.readCloneSource(ctx, c, opts)
	if err != nil {
		return err
	}
	opts.holdPodControllers = true
	// The operation lock is held until the clone is whole: while the
	// pod controllers are held, it tells a clone loading from one whose
	// create was killed (cloneInterrupted).
	unlock, err := p.createLocked(ctx, c, opts)
	if err != nil {
		return err
	}
	defer unlock()
	defer func() {
		if err != nil && !opts.Retain {
			if rmErr := p.remove(context.Background(), clusterdir.For(p.Home, c.Name)); rmErr != nil {
				err = fmt.Errorf("%w (deleting the cluster also failed: %v)", err, rmErr)
			} else {
				err = fmt.Errorf("%w (cluster %q deleted; --retain keeps it)", err, c.Name)
			}
		}
	}()
	if err := assignPodCIDRs(objects, c.Networking.PodSubnet, c.NodeCIDRMask()); err != nil {
		return err
	}
	cfg, err := p.RESTConfig(c.Name)
	if err != nil {
		return err
	}
	o := clone.Options{Progress: p.Out, Terminal: opts.Nodes.Terminal}
	if why := notDirect(c); why != "" {
		p.logf("Pods are created through the API server, for the simulator to start: %s", why)
	} else {
		store, err := etcdpods.Open(controlplane.EtcdSocket(clusterdir.For(p.Home, c.Name)))
		if err != nil {
			return err
		}
		defer store.Close()
		o.Direct = &clone.Direct{Store: store, StageSet: c.Stages, NodesWait: 2 * time.Minute}
	}
	started := time.Now()
	result, err := clone.Load(ctx, cfg, objects, o)
	if err != nil {
		return fmt.Errorf("cloning into %q: %w", c.Name, err)
	}
	p.logf(" ✓ Cloned in %.1fs: %s", time.Since(started).Seconds(), result.Summary())
	// The controller-manager starts again with its pod controllers; the
	// rest of the cluster runs on.
	if err := os.Remove(controlplane.PodControllersHeldFile(clusterdir.For(p.Home, c.Name))); err != nil {
		return fmt.Errorf("letting the pod controllers go: %w", err)
	}
	p.logf(" ✓ Pod controllers let go (the controller-manager starts again with them)")
	client, err := p.Client(c.Name)
	if err != nil {
		return err
	}
	// A message never points at a cluster about to be deleted.
	hint := fmt.Sprintf("; see kubesim logs kubelet-sim --name %s", c.Name)
	if !opts.Retain {
		hint = ""
	}
	return waitCloned(ctx, client, objects, opts.Wait, hint, p.logf)
}

// StatusBroken is the status of a clone whose create ended before the
// clone was whole.
const StatusBroken = "broken"

// cloneInterrupted reports whether d is a clone whose create ended before
// it was whole (killed, or failed with --retain): its pod controllers are
// still held, and no command is working on it (a create loading a clone
// holds its operation lock until the held file is gone).
func cloneInterrupted(d clusterdir.Dir) bool {
	_, err := os.Stat(controlplane.PodControllersHeldFile(d))
	return err == nil && !operationUnderWay(d)
}

// interruptedCause is why a clone is broken, and what to do.
const interruptedCause = "clone interrupted: not all of its objects were made and its pod controllers are held; delete it and clone again"

// notDirect says why a clone's pods may not be written straight into
// etcd: what the create process would have to know of the cluster's
// clock and its API server to write them as the API server would.
func notDirect(c *v1alpha1.Cluster) string {
	switch {
	case !controlplane.OwnVersion(c):
		return "the cluster runs Kubernetes " + c.Kubernetes + ", and the direct writes store pods as kubesim's own version's API server does"
	case c.TimeScale > 1:
		return "the cluster runs faster than real time (the pods' times would be this process's)"
	case c.DisableKubeletSim:
		return "the cluster has no kubelet simulator"
	case len(c.ExtraArgs["kube-apiserver"]) > 0:
		return "the API server has extraArgs (its storage, feature gates or admission may differ)"
	}
	return ""
}

// assignPodCIDRs gives each Node without one the next pod CIDR of the
// cluster's pod subnet, as the controller-manager's range allocator would
// once it has seen the node (it takes those it finds set as used): its
// pods get addresses, and go Running, the moment they are made, rather
// than wait for the controller-manager to start and come to their node.
func assignPodCIDRs(objects []*unstructured.Unstructured, podSubnet string, mask int) error {
	_, subnet, err := net.ParseCIDR(podSubnet)
	if err != nil || subnet.IP.To4() == nil {
		return fmt.Errorf("networking.podSubnet: %q is not an IPv4 CIDR", podSubnet)
	}
	held, err := v1alpha1.NodeCIDRs(podSubnet, mask)
	if err != nil {
		return err
	}
	base := binary.BigEndian.Uint32(subnet.IP.To4())
	next := 0
	for _, obj := range objects {
		if obj.GetKind() != "Node" {
			continue
		}
		if cidr, _, _ := unstructured.NestedString(obj.Object, "spec", "podCIDR"); cidr != "" {
			continue
		}
		if next >= held {
			return fmt.Errorf("networking.podSubnet: %s holds %d /%d node CIDRs, fewer than the snapshot's nodes; give a larger --pod-subnet", podSubnet, held, mask)
		}
		ip := make(net.IP, 4)
		binary.BigEndian.PutUint32(ip, base+uint32(next)<<(32-mask))
		cidr := (&net.IPNet{IP: ip, Mask: net.CIDRMask(mask, 32)}).String()
		if err := unstructured.SetNestedField(obj.Object, cidr, "spec", "podCIDR"); err != nil {
			return err
		}
		if err := unstructured.SetNestedStringSlice(obj.Object, []string{cidr}, "spec", "podCIDRs"); err != nil {
			return err
		}
		next++
	}
	return nil
}

// cloneVersion has a clone run its source's Kubernetes version (source:
// its release) unless the user chose one: the same minor when this build
// has it, else kubesim's own, with a note saying why. A source newer than
// the version the clone runs is refused: its objects may hold what that
// version does not know.
func cloneVersion(c *v1alpha1.Cluster, source string) (note string, err error) {
	if c.Kubernetes == "" && source != "" {
		if v, err := kubeversion.Lookup(kubeversion.MinorOf(source)); err == nil {
			c.Kubernetes = v.Minor
		} else {
			note = fmt.Sprintf("The source runs Kubernetes %s; the clone runs %s instead (%s)", source, kubeversion.Default().Minor, strings.TrimPrefix(err.Error(), kubeversion.FieldPrefix))
		}
	}
	v, err := kubeversion.Lookup(c.Kubernetes)
	if err != nil {
		return "", err
	}
	return note, snapshot.CheckVersion(snapshot.Header{Kubernetes: source}, v.Release)
}

// readCloneSource reads the snapshot file, or exports the context's
// cluster in memory, and settles the clone's Kubernetes version.
func (p *Provider) readCloneSource(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) ([]*unstructured.Unstructured, error) {
	if c.FromContext != "" {
		cfg, err := export.SourceConfig(p.Kubeconfig, c.FromContext)
		if err != nil {
			// SourceConfig names the context by snapshot export's flag;
			// the user gave this one as --from-context.
			if rest, ok := strings.CutPrefix(err.Error(), "--context "); ok {
				return nil, errors.New("--from-context " + rest)
			}
			return nil, err
		}
		r, err := export.Export(ctx, export.Options{Config: cfg, Source: c.FromContext, Progress: p.Out, Terminal: opts.Nodes.Terminal})
		if err != nil {
			return nil, err
		}
		for _, line := range r.Summary() {
			p.logf("%s", line)
		}
		note, err := cloneVersion(c, r.Header.Kubernetes)
		if err != nil {
			return nil, fmt.Errorf("--from-context %s: %w", c.FromContext, err)
		}
		p.note(note)
		return r.Objects, nil
	}
	f, err := os.Open(c.From)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("--from: %w", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, objects, err := snapshot.Read(f)
	var note string
	if err == nil {
		note, err = cloneVersion(c, h.Kubernetes)
	}
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", c.From, err)
	}
	p.logf("Cloning %s (%s, Kubernetes %s, exported %s): %s", c.From, h.Source, h.Kubernetes, h.Exported.Format(time.RFC3339), snapshot.Summary(h.Counts))
	p.note(note)
	return objects, nil
}

// waitCloned waits until the cloned nodes are Ready and the pods the
// source ran Running, saying how far it got if they are not within wait;
// then it names the cloned pods not Running, and why. A pod the source
// ran is one bound to a node of the snapshot: an unbound pod was Pending
// there (the scheduler had found it no node) and may well be here, and a
// pod on a node the snapshot lacks has nowhere to run. Neither is waited
// for, nor are the nodes held NotReady (heldNotReady) and their pods. It
// counts from a watch, not by listing again and again: at 20,000 pods
// each list would cost the API server more than the clone's own writes.
func waitCloned(ctx context.Context, client kubernetes.Interface, objects []*unstructured.Unstructured, wait time.Duration, hint string, logf func(string, ...any)) error {
	nodes, held, pods := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, obj := range objects {
		if obj.GetKind() == "Node" {
			if heldNotReady(obj.GetLabels()) {
				held[obj.GetName()] = true
			} else {
				nodes[obj.GetName()] = true
			}
		}
	}
	if len(held) > 0 {
		logf(" ! %d cloned nodes are held NotReady by their labels, as in the source (kubesim node start, or remove the chaos label, to bring one up): %s", len(held), strings.Join(slices.Sorted(maps.Keys(held)), ", "))
	}
	all := 0
	for _, obj := range objects {
		if obj.GetKind() == "Pod" {
			all++
			node, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName")
			pods[snapshot.Name(obj)] = nodes[node]
		}
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	nodeLister, podLister := factory.Core().V1().Nodes().Lister(), factory.Core().V1().Pods().Lister()
	watching, stop := context.WithCancel(ctx)
	factory.Start(watching.Done())
	defer func() { stop(); factory.Shutdown() }()
	started := time.Now()
	var settleBy time.Time
	for {
		c := countCloned(nodeLister, podLister, nodes, held, pods)
		done := c.ready == len(nodes) && c.running == c.waited
		if done && settleBy.IsZero() {
			settleBy = time.Now().Add(settleWait)
		}
		// The others are given a while for the scheduler to try them,
		// for their reason, but never fail the clone.
		if done && (c.unsettled == 0 || ctx.Err() != nil || time.Now().After(settleBy)) {
			logf(" ✓ %d nodes Ready, %d pods Running (%.1fs)", c.ready, c.running, time.Since(started).Seconds())
			if len(c.pending) > 0 {
				logf(" ! %d of %d cloned pods not Running (only pods on the snapshot's nodes are waited for):", len(c.pending), all)
				for i, line := range c.pending {
					if i == maxPendingShown {
						logf("     … and %d more (kubectl get pods -A --field-selector status.phase!=Running)", len(c.pending)-i)
						break
					}
					logf("     %s", line)
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			if !done {
				return fmt.Errorf("%d of %d cloned nodes Ready and %d of %d cloned pods Running after %s%s%s", c.ready, len(nodes), c.running, c.waited, wait, c.stuck, hint)
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// heldNotReady says whether a node's labels keep it from becoming Ready:
// a node stopped in the source (kubesim node stop) is stopped in the clone
// too, and a chaos label holds a node NotReady (the built-in
// node-initialize Stage skips it). The clone waits neither for them nor
// for their pods.
func heldNotReady(labels map[string]string) bool {
	return labels[kubeletsim.StoppedLabel] == "true" ||
		labels["chaos.kubesim.io/node"] == "not-ready" ||
		labels["node-not-ready.stage.kwok.x-k8s.io"] == "true"
}

const (
	// maxPendingShown is how many pods not Running a clone names.
	maxPendingShown = 5
	// settleWait bounds the wait for the scheduler's first try of the
	// pods not waited for, once the others run: it tries a new pod within
	// a second or two.
	settleWait = 15 * time.Second
)

// cloned is how far a clone has got.
type cloned struct {
	ready   int // cloned nodes Ready
	waited  int // pods on cloned nodes, which must run
	running int // of those, Running (or, a Job's, finished meanwhile)
	// pending are the other pods not Running, one line each: the pod and
	// why; unsettled are those of them the scheduler has not tried yet.
	pending   []string
	unsettled int
	stuck     string // the first pod that must run and does not, if any
}

// countCloned counts the cloned nodes that are Ready and the cloned pods
// that are Running; pods says of each cloned pod whether it is on a cloned
// node.
func countCloned(nodeLister corelisters.NodeLister, podLister corelisters.PodLister, nodes, held, pods map[string]bool) cloned {
	var c cloned
	all, _ := nodeLister.List(labels.Everything())
	for _, node := range all {
		if nodes[node.Name] && scale.IsReady(node) {
			c.ready++
		}
	}
	for _, onNode := range pods {
		if onNode {
			c.waited++
		}
	}
	allPods, _ := podLister.List(labels.Everything())
	slices.SortFunc(allPods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, pod := range allPods {
		onNode, cloned := pods[pod.Namespace+"/"+pod.Name]
		if !cloned {
			continue
		}
		running := pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded
		switch {
		case onNode && running:
			c.running++
		case onNode && c.stuck == "":
			c.stuck = fmt.Sprintf(" (pod %s/%s on node %s is %s)", pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Status.Phase)
		case !onNode && !running:
			why, tried := notRunning(pod, held)
			c.pending = append(c.pending, pod.Namespace+"/"+pod.Name+": "+why)
			if !tried {
				c.unsettled++
			}
		}
	}
	return c
}

// notRunning says why a pod not on a cloned node is not Running: the node
// it is bound to is held NotReady or not in the snapshot, or the
// scheduler's own message (its PodScheduled condition, which `kubesim
// explain pod` shows too).
// tried is false while the scheduler has not tried it yet.
func notRunning(pod *corev1.Pod, held map[string]bool) (why string, tried bool) {
	if held[pod.Spec.NodeName] {
		return fmt.Sprintf("on node %q, held NotReady as in the source", pod.Spec.NodeName), true
	}
	if pod.Spec.NodeName != "" {
		return fmt.Sprintf("bound to node %q, which is not in the snapshot", pod.Spec.NodeName), true
	}
	if name := pod.Spec.SchedulerName; name != "" && name != corev1.DefaultSchedulerName {
		return fmt.Sprintf("Pending: for scheduler %q, not the cluster's kube-scheduler", name), true
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			return "Pending, as in the source: " + strings.Join(strings.Fields(cond.Message), " "), true
		}
	}
	return "Pending, as in the source; not tried by the scheduler yet", false
}

// note logs a line, if there is one.
func (p *Provider) note(line string) {
	if line != "" {
		p.logf("%s", line)
	}
}

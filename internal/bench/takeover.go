package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/scale"
)

// TakeoverOptions size `kubesim bench takeover`.
type TakeoverOptions struct {
	Home       string
	Config     *v1alpha1.Cluster // nil: defaults; its name is replaced
	Nodes      int
	Simulators int
	Keep       bool
	Out, Log   io.Writer
}

// TakeoverResult is what `kubesim bench takeover` measured.
type TakeoverResult struct {
	Nodes int
	Grace time.Duration // the node-monitor grace period
	// Held is how many nodes each simulator held before the kill.
	Held map[string]int
	// Killed is the simulator killed (-9); Took, from the kill until every
	// one of its nodes' Leases was renewed by another.
	Killed string
	Took   time.Duration
	// NotReady counts the nodes seen not Ready in Window after the kill.
	NotReady int
	Window   time.Duration
}

// takeoverMargin is how much longer than the grace period the nodes are
// watched after the kill: the node-lifecycle controller looks every 5 s.
const takeoverMargin = 10 * time.Second

// Takeover runs `kubesim bench takeover`: a cluster without a simulator of
// its own, o.Simulators `kubesim kubelet-sim` processes sharing o.Nodes
// nodes, the one holding the most killed with -9; it prints the balance,
// the take-over time and the nodes that went NotReady.
func Takeover(ctx context.Context, o TakeoverOptions) error {
	cfg := &v1alpha1.Cluster{}
	if o.Config != nil {
		cfg = o.Config.DeepCopy()
	}
	cfg.Name = fmt.Sprintf("bench-%d", os.Getpid())
	cfg.DisableKubeletSim = true
	c, err := NewCluster(ctx, o.Home, cfg, io.Discard)
	if err != nil {
		return err
	}
	if o.Keep {
		fmt.Fprintf(o.Log, "Keeping cluster %q (kubesim delete cluster --name %s)\n", c.Name, c.Name)
	} else {
		defer c.Delete(context.Background())
	}
	d := clusterdir.For(o.Home, c.Name)
	resolved, err := d.Load()
	if err != nil {
		return err
	}
	sims, err := startSimulators(ctx, d, resolved, o.Simulators)
	if err != nil {
		return err
	}
	defer sims.stop()
	res := TakeoverResult{Nodes: o.Nodes, Grace: resolved.NodeLifecycle.NodeMonitorGracePeriod.Duration}
	fmt.Fprintf(o.Log, "Creating %d nodes for %d simulators\n", o.Nodes, o.Simulators)
	if err := scale.Nodes(ctx, c.Client, scale.Options{Replicas: o.Nodes, Wait: 10 * time.Minute}); err != nil {
		return err
	}
	leases := newLeaseWatch(ctx, c)
	defer leases.stop()
	// Shared once every node is held by a simulator and every simulator,
	// all of them announced, holds some.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		res.Held = leases.held()
		total := 0
		for _, h := range sims.holders {
			total += res.Held[h]
		}
		return total == o.Nodes && len(res.Held) == len(sims.holders), nil
	})
	if err != nil {
		return fmt.Errorf("nodes shared by the simulators: %v held, of %d: %w", res.Held, o.Nodes, err)
	}
	res.Killed = slices.MaxFunc(sims.holders, func(a, b string) int { return res.Held[a] - res.Held[b] })
	notReady := watchNotReady(ctx, c)
	defer notReady.stop()
	fmt.Fprintf(o.Log, "Killing %s\n", res.Killed)
	victims := leases.heldBy(res.Killed)
	killed := time.Now()
	if err := sims.kill(res.Killed); err != nil {
		return err
	}
	res.Window = res.Grace + takeoverMargin
	end := killed.Add(res.Window)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, res.Window, true, func(context.Context) (bool, error) {
		t, done := leases.takenSince(victims, res.Killed, killed)
		res.Took = t.Sub(killed)
		return done, nil
	})
	if err != nil {
		PrintTakeover(o.Out, res)
		return fmt.Errorf("%s's nodes not all taken over within %s", res.Killed, res.Window)
	}
	// The rest of the window: nodes may still go NotReady if a Lease was
	// taken too late.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(end)):
	}
	res.NotReady = notReady.count()
	PrintTakeover(o.Out, res)
	return nil
}

// PrintTakeover prints the benchmark's lines.
func PrintTakeover(w io.Writer, r TakeoverResult) {
	holders := make([]string, 0, len(r.Held))
	for h := range r.Held {
		holders = append(holders, h)
	}
	slices.Sort(holders)
	var parts []string
	for _, h := range holders {
		parts = append(parts, fmt.Sprintf("%s %d", h, r.Held[h]))
	}
	fmt.Fprintf(w, "nodes per simulator: %s (max %.1f%% off even; node-monitor grace %s)\n",
		strings.Join(parts, ", "), maxDeviation(r.Held, r.Nodes), r.Grace)
	if r.Took > 0 {
		fmt.Fprintf(w, "take-over of %s's %d nodes (killed -9 until every Lease renewed by another): %.2fs\n",
			r.Killed, r.Held[r.Killed], r.Took.Seconds())
	}
	if r.Window > 0 {
		fmt.Fprintf(w, "nodes NotReady in the %s after the kill: %d of %d\n", r.Window, r.NotReady, r.Nodes)
	}
}

// maxDeviation is the largest difference from an even share of nodes
// among held, in percent of that share.
func maxDeviation(held map[string]int, nodes int) float64 {
	if len(held) == 0 {
		return 0
	}
	even := float64(nodes) / float64(len(held))
	worst := 0.0
	for _, n := range held {
		worst = max(worst, math.Abs(float64(n)-even)/even*100)
	}
	return worst
}

// simulators are the `kubesim kubelet-sim` processes of the benchmark,
// each logging to the cluster's logs/ directory.
type simulators struct {
	holders []string
	procs   map[string]*exec.Cmd
	logs    []*os.File
}

func startSimulators(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster, n int) (*simulators, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	grace := c.NodeLifecycle.NodeMonitorGracePeriod.Duration
	s := &simulators{procs: map[string]*exec.Cmd{}}
	for i := range n {
		holder := fmt.Sprintf("bench-sim-%d", i)
		log, err := os.Create(d.Log(holder))
		if err != nil {
			s.stop()
			return nil, err
		}
		s.logs = append(s.logs, log)
		// As a kubesim cluster runs its own, with its identity.
		cmd := exec.CommandContext(ctx, exe, "kubelet-sim", "--kubeconfig", d.ComponentKubeconfig(kubeletsim.ComponentName),
			"--manage-all-nodes", "--holder", holder, "--stages", c.Stages, "--node-ip-range", c.Networking.NodeSubnet,
			"--node-lease-duration", grace.String(), "--node-lease-renew-interval", (grace / 2).String())
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			s.stop()
			return nil, err
		}
		s.holders = append(s.holders, holder)
		s.procs[holder] = cmd
	}
	return s, nil
}

func (s *simulators) kill(holder string) error {
	if err := s.procs[holder].Process.Kill(); err != nil {
		return err
	}
	_ = s.procs[holder].Wait()
	delete(s.procs, holder)
	return nil
}

// stop ends the simulators still running, gracefully.
func (s *simulators) stop() {
	for _, cmd := range s.procs {
		_ = cmd.Process.Signal(os.Interrupt)
	}
	for _, cmd := range s.procs {
		_ = cmd.Wait()
	}
	for _, f := range s.logs {
		f.Close()
	}
}

// leaseWatch follows the node Leases and when each was last seen renewed
// by whom.
type leaseWatch struct {
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc

	mu sync.Mutex
	// seen is, for each node, its holder and when that holder's renewal
	// was first seen by this watch.
	seen map[string]leaseSeen
}

type leaseSeen struct {
	holder  string
	renewed time.Time // the Lease's renewTime
	at      time.Time // when the watch saw it
}

func newLeaseWatch(ctx context.Context, c *Cluster) *leaseWatch {
	ctx, cancel := context.WithCancel(ctx)
	notMember, _ := labels.Parse("!" + kubeletsim.MemberLabel)
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(corev1.NamespaceNodeLease),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = notMember.String() }))
	w := &leaseWatch{factory: f, cancel: cancel, seen: map[string]leaseSeen{}}
	note := func(obj any) {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok || l.Spec.RenewTime == nil {
			return
		}
		s := leaseSeen{holder: ptr.Deref(l.Spec.HolderIdentity, ""), renewed: l.Spec.RenewTime.Time, at: time.Now()}
		w.mu.Lock()
		w.seen[l.Name] = s
		w.mu.Unlock()
	}
	_, _ = f.Coordination().V1().Leases().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: note, UpdateFunc: func(_, obj any) { note(obj) },
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return w
}

func (w *leaseWatch) stop() { w.cancel(); w.factory.Shutdown() }

// held counts the nodes by holder.
func (w *leaseWatch) held() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, s := range w.seen {
		out[s.holder]++
	}
	return out
}

func (w *leaseWatch) heldBy(holder string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for n, s := range w.seen {
		if s.holder == holder {
			out = append(out, n)
		}
	}
	return out
}

// takenSince reports whether every one of nodes has had its Lease renewed
// by a holder other than from since, and when the last was seen so.
func (w *leaseWatch) takenSince(nodes []string, from string, since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, n := range nodes {
		s, ok := w.seen[n]
		if !ok || s.holder == from || s.renewed.Before(since) {
			return last, false
		}
		if s.at.After(last) {
			last = s.at
		}
	}
	return last, true
}

// notReadyWatch counts the nodes seen not Ready.
type notReadyWatch struct {
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc
	mu      sync.Mutex
	nodes   map[string]bool
}

func watchNotReady(ctx context.Context, c *Cluster) *notReadyWatch {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactory(c.Client, 0)
	w := &notReadyWatch{factory: f, cancel: cancel, nodes: map[string]bool{}}
	check := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && !scale.IsReady(n) {
			w.mu.Lock()
			w.nodes[n.Name] = true
			w.mu.Unlock()
		}
	}
	_, _ = f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: check, UpdateFunc: func(_, obj any) { check(obj) },
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return w
}

func (w *notReadyWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.nodes)
}

func (w *notReadyWatch) stop() { w.cancel(); w.factory.Shutdown() }

package scenario

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/kubesim/kubesim/internal/nodecost"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// fleet records a cluster's nodes and Pending pods as they change, from
// the watches' events: every change, not samples, so that a bound over a
// window (maxNodes, maxDisrupting) sees each moment, and cost is the
// integral of the nodes' prices over the cluster's time.
type fleet struct {
	mu    sync.Mutex
	lives []*nodeLife          // every node seen, in the order seen
	live  map[string]*nodeLife // those still there, by name
	// pendingSince is when each pod now Pending was first seen so; waited
	// is each pod that has run, so a pod is timed once.
	pendingSince map[types.UID]time.Time
	waited       map[types.UID]bool
	pending      []countAt
	pendingN     int // the count now, and since when
	pendingAt    time.Time
	startup      []time.Duration
	// reasons are the DisruptionReason Karpenter set on each node's
	// NodeClaim, by node name.
	reasons map[string]string
	// elastic: a NodePool launched a node here (the cluster's autoscaler
	// is also asked of its spec).
	elastic bool
	now     func() time.Time // time.Now; tests set their own
}

type nodeLife struct {
	result.NodeLife
	added, gone time.Time // gone: zero while it is there
	disrupting  []timeSpan
}

type timeSpan struct{ from, to time.Time } // to zero: still open

type countAt struct {
	at time.Time
	n  int
}

// pendingCoalesce is how close in cluster time changes of the Pending
// count fold into one sample (the most of them): a burst of 10,000 pods
// would otherwise be as many points on a chart a few hundred pixels wide.
const pendingCoalesce = 250 * time.Millisecond

func newFleet() *fleet {
	return &fleet{live: map[string]*nodeLife{}, pendingSince: map[types.UID]time.Time{}, waited: map[types.UID]bool{}, reasons: map[string]string{}, now: time.Now}
}

func (f *fleet) nodeHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.node(obj, false) },
		UpdateFunc: func(_, obj any) { f.node(obj, false) },
		DeleteFunc: func(obj any) { f.node(obj, true) },
	}
}

func (f *fleet) podHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.pod(obj, false) },
		UpdateFunc: func(_, obj any) { f.pod(obj, false) },
		DeleteFunc: func(obj any) { f.pod(obj, true) },
	}
}

// disrupting: Karpenter's disruption taint, or deleting. Karpenter taints
// a node before it launches its replacement and drains it, so the taint
// marks the start of a disruption; the deletion, its end game.
func disrupting(n *corev1.Node) bool {
	if n.DeletionTimestamp != nil {
		return true
	}
	for _, t := range n.Spec.Taints {
		if t.Key == karpenterv1.DisruptedTaintKey {
			return true
		}
	}
	return false
}

func (f *fleet) node(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.live[n.Name]
	if l == nil {
		if deleted {
			return
		}
		c := nodecost.Of(n)
		l = &nodeLife{NodeLife: result.NodeLife{Name: n.Name, NodePool: c.NodePool, InstanceType: c.InstanceType,
			PricePerHour: c.PricePerHour, Priced: c.Priced}, added: now}
		f.live[n.Name] = l
		f.lives = append(f.lives, l)
		f.elastic = f.elastic || c.NodePool != ""
	}
	l.Labels = n.Labels
	if c := nodecost.Of(n); c.Priced && !l.Priced { // a price labelled later
		l.PricePerHour, l.Priced = c.PricePerHour, true
	}
	open := len(l.disrupting) > 0 && l.disrupting[len(l.disrupting)-1].to.IsZero()
	switch d := disrupting(n) && !deleted; {
	case d && !open:
		l.disrupting = append(l.disrupting, timeSpan{from: now})
	case !d && open:
		l.disrupting[len(l.disrupting)-1].to = now
	}
	if deleted {
		l.gone = now
		l.Reason = f.reasons[n.Name]
		delete(f.live, n.Name)
		delete(f.reasons, n.Name)
	}
}

func (f *fleet) pod(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	before := len(f.pendingSince)
	since, wasPending := f.pendingSince[p.UID]
	switch {
	case !deleted && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodPending:
		if !wasPending && !f.waited[p.UID] {
			f.pendingSince[p.UID] = now
		}
	case !deleted && p.Status.Phase == corev1.PodRunning && wasPending:
		f.startup = append(f.startup, now.Sub(since))
		f.waited[p.UID] = true
		delete(f.pendingSince, p.UID)
	default:
		delete(f.pendingSince, p.UID)
		if deleted {
			delete(f.waited, p.UID)
		}
	}
	if n := len(f.pendingSince); n != before {
		f.countPending(now, n)
	}
}

// countPending records the Pending count: changes within pendingCoalesce
// of the last sample fold into it (the most of them), and where such a
// burst ended is kept as a sample of its own before the next.
func (f *fleet) countPending(now time.Time, n int) {
	prevN, prevAt := f.pendingN, f.pendingAt
	f.pendingN, f.pendingAt = n, now
	k := len(f.pending)
	if k > 0 && now.Sub(f.pending[k-1].at) < pendingCoalesce {
		f.pending[k-1].n = max(f.pending[k-1].n, n)
		return
	}
	if k > 0 && f.pending[k-1].n != prevN {
		f.pending = append(f.pending, countAt{prevAt, prevN})
	}
	f.pending = append(f.pending, countAt{now, n})
}

// nodeClaims is Karpenter's NodeClaims, read for why it disrupted a node.
var nodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

// watchNodeClaims records each NodeClaim's DisruptionReason by its node:
// only in a cluster that runs Karpenter, which has the CRD.
func (f *fleet) watchNodeClaims(t *target) func() {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(t.dynamic, 0)
	record := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		node, _, _ := unstructured.NestedString(u.Object, "status", "nodeName")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		reason := ""
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == karpenterv1.ConditionTypeDisruptionReason && m["status"] == string(metav1.ConditionTrue) {
				reason, _ = m["reason"].(string)
			}
		}
		if node == "" {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if reason == "" {
			delete(f.reasons, node) // a disruption given up clears it
		} else {
			f.reasons[node] = reason
		}
	}
	_, _ = factory.ForResource(nodeClaims).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	return func() { cancel(); factory.Shutdown() }
}

// snapshot is the fleet as a result: times since began, open spans left
// open, over [from, to].
func (f *fleet) snapshot(began time.Time, from, to time.Duration) *result.Fleet {
	f.mu.Lock()
	defer f.mu.Unlock()
	since := func(t time.Time) time.Duration { return t.Sub(began) }
	out := &result.Fleet{Elastic: f.elastic, From: from, To: to, Nodes: make([]result.NodeLife, len(f.lives))}
	for i, l := range f.lives {
		n := l.NodeLife
		n.Added = since(l.added)
		if !l.gone.IsZero() {
			g := since(l.gone)
			n.Gone = &g
		}
		if n.Reason == "" && l.gone.IsZero() {
			n.Reason = f.reasons[l.Name]
		}
		n.Disrupting = make([]result.Span, len(l.disrupting))
		for j, s := range l.disrupting {
			n.Disrupting[j].From = since(s.from)
			if !s.to.IsZero() {
				e := since(s.to)
				n.Disrupting[j].To = &e
			} else if n.Gone != nil {
				n.Disrupting[j].To = n.Gone
			}
		}
		out.Nodes[i] = n
	}
	out.Pending = make([]result.Count, len(f.pending))
	for i, c := range f.pending {
		out.Pending[i] = result.Count{At: since(c.at), N: c.n}
	}
	if k := len(f.pending); k > 0 && f.pending[k-1].n != f.pendingN {
		out.Pending = append(out.Pending, result.Count{At: since(f.pendingAt), N: f.pendingN})
	}
	out.Startup = append([]time.Duration(nil), f.startup...)
	return out
}

// stepNamed is where the latest step of that name started (a foreach's
// steps match without their " [var=value]").
func stepNamed(steps []*result.Step, name string) (*result.Step, bool) {
	for i := len(steps) - 1; i >= 0; i-- {
		n := steps[i].Name
		if n == name || strings.HasPrefix(n, name+" [") {
			return steps[i], true
		}
	}
	return nil, false
}

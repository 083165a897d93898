package kubeletsim

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// MemberLabel marks the Leases in kube-node-lease by which simulators
// announce themselves; a node's Lease never carries it.
const MemberLabel = "kubesim.io/kubelet-sim"

// memberLeasePrefix begins the name of every announcement Lease.
const memberLeasePrefix = "kubelet-sim-"

// members announces this simulator with a short Lease of its own and
// follows the other simulators' announcements: the live ones share the
// nodes (assignment). A simulator is live while its announcement is
// renewed; one killed lapses within memberTiming's duration, one that
// stops gracefully lapses at once, and its nodes go to the others.
type members struct {
	client   kubernetes.Interface
	holder   string
	duration time.Duration // of our announcement
	interval time.Duration // between its renewals
	// forgetAfter is how long a lapsed announcement is kept: once the
	// node Leases of its simulator have lapsed too, nothing needs it.
	forgetAfter time.Duration
	// onChange is told of every change of the live set.
	onChange func(prev, next *assignment)

	current atomic.Pointer[assignment]
	lister  coordinationlisters.LeaseLister
	synced  cache.InformerSynced
	changed chan struct{} // an announcement came, changed or went

	mu    sync.Mutex
	known map[string]bool // holders that announce or announced themselves
	own   *coordinationv1.Lease
}

// memberTiming derives the announcement's duration from the node Leases'
// (the node-monitor grace period in kubesim clusters): a fifth of it,
// within 2–8 s, renewed four times in that. A killed simulator's nodes are
// then taken over within 8 s of its death plus the writes, while their
// Leases, renewed every half grace, have at least half a grace left.
func memberTiming(nodeLease time.Duration) (duration, interval time.Duration) {
	duration = min(max(nodeLease/5, 2*time.Second), 8*time.Second).Truncate(time.Second)
	return duration, duration / 4
}

func newMembers(client kubernetes.Interface, holder string, nodeLease time.Duration, onChange func(prev, next *assignment)) *members {
	m := &members{
		client:      client,
		holder:      holder,
		forgetAfter: nodeLease,
		onChange:    onChange,
		changed:     make(chan struct{}, 1),
		known:       map[string]bool{holder: true},
	}
	m.duration, m.interval = memberTiming(nodeLease)
	m.current.Store(newAssignment([]string{holder}))
	return m
}

// memberLeaseName is the announcement Lease of holder: readable, and
// unique by a hash, as holders may hold characters names may not.
func memberLeaseName(holder string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(holder))
	if len(clean) > 40 {
		clean = clean[:40]
	}
	h := fnv.New32a()
	h.Write([]byte(holder))
	return fmt.Sprintf("%s%s-%08x", memberLeasePrefix, strings.Trim(clean, "-"), h.Sum32())
}

// owner is the simulator that is to hold node's Lease.
func (m *members) owner(node string) string { return m.current.Load().owner(node) }

// isKnown reports whether holder is a simulator that announces, or
// announced, itself: its node Leases may be taken at once.
func (m *members) isKnown(holder string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.known[holder]
}

// start announces this simulator and reads the others' announcements; the
// nodes are shared from then on. It fails at once, naming the fix, if the
// simulator may not read them.
func (m *members) start(ctx context.Context) error {
	leases := m.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	selector := labels.SelectorFromSet(labels.Set{MemberLabel: "member"}).String()
	if _, err := leases.List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 1}); apierrors.IsForbidden(err) {
		return fmt.Errorf("reading the simulators' Leases in %s: %w; grant list, watch, patch and delete on leases there (deploy/kubelet-sim-leases-role.yaml)", corev1.NamespaceNodeLease, err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(m.client, 0,
		informers.WithNamespace(corev1.NamespaceNodeLease),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	informer := factory.Coordination().V1().Leases()
	m.lister, m.synced = informer.Lister(), informer.Informer().HasSynced
	poke := func(any) {
		select {
		case m.changed <- struct{}{}:
		default:
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for {
		err := m.announce(ctx)
		if err == nil {
			break
		}
		klog.ErrorS(err, "announcing this simulator; retrying", "lease", memberLeaseName(m.holder))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(m.interval):
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), m.synced) {
		return ctx.Err()
	}
	m.recompute(ctx)
	return nil
}

// run renews the announcement and follows the others' until ctx ends,
// then releases the announcement so the others take over at once.
func (m *members) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.follow(ctx) }()
	tick := time.NewTicker(m.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			m.release()
			return
		case <-tick.C:
			if err := m.announce(ctx); err != nil && ctx.Err() == nil {
				klog.ErrorS(err, "renewing this simulator's announcement", "lease", memberLeaseName(m.holder))
			}
		}
	}
}

// follow recomputes the live set on every change of an announcement and
// when a live one is due to lapse.
func (m *members) follow(ctx context.Context) {
	timer := time.NewTimer(m.recompute(ctx))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.changed:
		case <-timer.C:
		}
		timer.Reset(m.recompute(ctx))
	}
}

// recompute reads the announcements, stores the live set (telling
// onChange if it changed), forgets long-lapsed announcements and returns
// how long until the next live one lapses.
func (m *members) recompute(ctx context.Context) time.Duration {
	now := time.Now()
	live := []string{m.holder}
	known := map[string]bool{m.holder: true}
	next := time.Minute
	all, _ := m.lister.List(labels.Everything())
	for _, lease := range all {
		holder := ptr.Deref(lease.Spec.HolderIdentity, "")
		if holder == "" {
			continue
		}
		known[holder] = true
		if holder == m.holder {
			continue
		}
		lapses := lapsesAt(lease)
		switch {
		case now.Before(lapses):
			live = append(live, holder)
			// A little after it lapses, so that it has by then.
			next = min(next, lapses.Sub(now)+10*time.Millisecond)
		case now.Sub(lapses) > m.forgetAfter:
			m.forget(ctx, lease)
		}
	}
	m.mu.Lock()
	m.known = known
	m.mu.Unlock()
	prev, cur := m.current.Load(), newAssignment(live)
	if !prev.equal(cur) {
		m.current.Store(cur)
		klog.InfoS("simulators sharing the nodes changed", "live", cur.live)
		if m.onChange != nil {
			m.onChange(prev, cur)
		}
	}
	return next
}

// lapsesAt is when an announcement lapses unless renewed.
func lapsesAt(lease *coordinationv1.Lease) time.Time {
	if lease.Spec.RenewTime == nil {
		return time.Time{}
	}
	d := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second
	return lease.Spec.RenewTime.Add(d)
}

// forget deletes an announcement that lapsed long ago, unless it has been
// renewed since: a Deployment's replicas leave one per pod name.
func (m *members) forget(ctx context.Context, lease *coordinationv1.Lease) {
	err := m.client.CoordinationV1().Leases(lease.Namespace).Delete(ctx, lease.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		klog.V(2).InfoS("forgetting a lapsed announcement", "lease", lease.Name, "err", err)
	}
}

// announce renews (or makes) this simulator's announcement Lease.
func (m *members) announce(ctx context.Context) error {
	return m.write(ctx, time.Now(), m.duration)
}

// release makes the announcement lapse at once, as client-go's leader
// election releases a Lease: the others take this simulator's nodes
// without waiting for it to lapse by itself.
func (m *members) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.write(ctx, time.Now().Add(-time.Second), time.Second); err != nil {
		klog.ErrorS(err, "releasing this simulator's announcement; the others take its nodes once it lapses", "lease", memberLeaseName(m.holder))
		return
	}
	klog.InfoS("released this simulator's announcement", "lease", memberLeaseName(m.holder))
}

func (m *members) write(ctx context.Context, renewed time.Time, duration time.Duration) error {
	leases := m.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	want := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      memberLeaseName(m.holder),
			Namespace: corev1.NamespaceNodeLease,
			Labels:    map[string]string{MemberLabel: "member"},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(m.holder),
			LeaseDurationSeconds: ptr.To(int32(duration / time.Second)),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
	m.mu.Lock()
	own := m.own
	m.mu.Unlock()
	var out *coordinationv1.Lease
	var err error
	if own != nil {
		renewal := own.DeepCopy()
		renewal.Spec = want.Spec
		out, err = leases.Update(ctx, renewal, metav1.UpdateOptions{})
	}
	if own == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		out, err = leases.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var current *coordinationv1.Lease
			if current, err = leases.Get(ctx, want.Name, metav1.GetOptions{}); err == nil {
				current.Spec, current.Labels = want.Spec, want.Labels
				out, err = leases.Update(ctx, current, metav1.UpdateOptions{})
			}
		}
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.own = out
	m.mu.Unlock()
	return nil
}

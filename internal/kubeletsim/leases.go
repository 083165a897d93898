package kubeletsim

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// leases keeps the Lease of every node this simulator holds renewed, as a
// kubelet does: that is what tells the node-lifecycle controller a node is
// alive. Of the candidate nodes it holds those the membership assigns to
// it: it takes such a node's Lease at once from any simulator (a dead one,
// or a live one the node has just moved from), while a Lease renewed
// lately by a holder that is no simulator (a real kubelet) is left alone
// until it lapses. A held node that moves to another simulator is renewed
// on its schedule until that one has taken it, so it never lapses between
// the two; it is managed (its pods too) only while assigned here.
type leases struct {
	client   coordinationclient.LeasesGetter
	holder   string
	duration time.Duration
	interval time.Duration
	members  membership
	// onAcquired is told when a node becomes ours.
	onAcquired func(node string)

	queue workqueue.TypedDelayingInterface[string]
	// backoff spaces a node's retries while renewals fail (the API server
	// is away), so they do not flood it when it returns.
	backoff workqueue.TypedRateLimiter[string]

	mu      sync.Mutex
	held    map[string]*coordinationv1.Lease // our current copy of each held lease
	wanted  map[string]types.UID             // nodes we should hold, with their UIDs
	stopped map[string]bool                  // held nodes whose Lease must lapse
	// from is the simulator a node assigned here last was assigned to:
	// its Lease is taken from it with one write.
	from map[string]string
}

// membership says which simulator is to hold a node's Lease, and which
// holders are simulators.
type membership interface {
	owner(node string) string
	isKnown(holder string) bool
}

// alone is the membership of a simulator that shares nodes with nobody.
type alone string

func (a alone) owner(string) string        { return string(a) }
func (a alone) isKnown(holder string) bool { return holder == string(a) }

func newLeases(client coordinationclient.LeasesGetter, holder string, duration, interval time.Duration, onAcquired func(string)) *leases {
	return &leases{
		client:     client,
		holder:     holder,
		duration:   duration,
		interval:   interval,
		members:    alone(holder),
		onAcquired: onAcquired,
		queue:      workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "leases"}),
		backoff:    workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, interval),
		held:       map[string]*coordinationv1.Lease{},
		wanted:     map[string]types.UID{},
		stopped:    map[string]bool{},
		from:       map[string]string{},
	}
}

// setStopped stops or resumes renewing node's Lease. A stopped Lease
// lapses, as a dead kubelet's does.
func (l *leases) setStopped(name string, stopped bool) {
	l.mu.Lock()
	changed := l.stopped[name] != stopped
	if stopped {
		l.stopped[name] = true
		delete(l.held, name) // held again once renewed after a start
	} else {
		delete(l.stopped, name)
	}
	l.mu.Unlock()
	if changed && !stopped {
		l.queue.Add(name) // renew at once
	}
}

// want asks for node's Lease to be taken and kept.
func (l *leases) want(node *corev1.Node) {
	l.mu.Lock()
	_, known := l.wanted[node.Name]
	l.wanted[node.Name] = node.UID
	l.mu.Unlock()
	if !known {
		l.queue.Add(node.Name)
	}
}

// drop stops renewing node's Lease (the node is gone or not ours to manage).
func (l *leases) drop(name string) {
	l.mu.Lock()
	delete(l.wanted, name)
	delete(l.held, name)
	delete(l.stopped, name)
	l.mu.Unlock()
}

// holds reports whether this simulator holds node's Lease and the node is
// assigned to it: whether it manages the node.
func (l *leases) holds(name string) bool {
	l.mu.Lock()
	_, ok := l.held[name]
	l.mu.Unlock()
	return ok && l.owns(name)
}

// owns reports whether node is assigned to this simulator.
func (l *leases) owns(name string) bool { return l.members.owner(name) == l.holder }

// reassign follows a change of the simulators sharing the nodes: a node
// that comes here has its Lease taken at once — even one still held from
// before it went, which the simulator it went to may have taken since.
// One that goes elsewhere needs nothing now: it is no longer managed
// here, and its next renewal hands it over.
func (l *leases) reassign(prev, next *assignment) {
	var take []string
	l.mu.Lock()
	for name := range l.wanted {
		was := prev.owner(name)
		if was == l.holder || next.owner(name) != l.holder || l.stopped[name] {
			continue
		}
		delete(l.held, name)
		l.from[name] = was
		take = append(take, name)
	}
	l.mu.Unlock()
	for _, name := range take {
		l.queue.Add(name)
	}
}

func (l *leases) run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		l.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				name, quit := l.queue.Get()
				if quit {
					return
				}
				l.renew(ctx, name)
				l.queue.Done(name)
			}
		}()
	}
	wg.Wait()
}

// renew takes or renews one node's Lease and schedules the next renewal.
func (l *leases) renew(ctx context.Context, name string) {
	l.mu.Lock()
	uid, wanted := l.wanted[name]
	lease := l.held[name]
	stopped := l.stopped[name]
	from := l.from[name]
	delete(l.from, name)
	l.mu.Unlock()
	if !wanted || stopped {
		l.backoff.Forget(name)
		return // setStopped(false) queues it again
	}
	owns := l.owns(name)
	if lease == nil && !owns {
		l.backoff.Forget(name)
		return // another simulator's; reassign queues it if it comes here
	}
	wasHeld := lease != nil
	next, err := l.write(ctx, name, uid, lease, owns, from)
	l.mu.Lock()
	switch _, still := l.wanted[name]; {
	case !still || (err == nil && next == nil):
		delete(l.held, name)
	case err == nil:
		l.held[name] = next
	} // on an error our copy stays, to be renewed on the retry
	l.mu.Unlock()
	if err != nil {
		retry := l.backoff.When(name)
		klog.V(2).InfoS("lease renewal failed", "node", name, "err", err, "retry", retry)
		l.queue.AddAfter(name, retry)
		return
	}
	l.backoff.Forget(name)
	if next == nil {
		if owns {
			// A holder that is no simulator has it: look again once it
			// could have lapsed.
			l.queue.AddAfter(name, l.duration)
		} // else handed over to the simulator it is assigned to
		return
	}
	if !wasHeld && l.onAcquired != nil {
		l.onAcquired(name)
	}
	// Jitter spreads renewals evenly instead of in bursts.
	l.queue.AddAfter(name, l.interval-rand.N(l.interval/5+1))
}

// write renews lease (our copy, or nil) or, if the node is ours (owns),
// takes it over when it is free, lapsed or another simulator's; from, if
// set, is the simulator likely to hold it. It returns nil, nil when the
// node is not ours to take: another simulator took it from us, or a live
// holder that is no simulator has it.
func (l *leases) write(ctx context.Context, name string, uid types.UID, lease *coordinationv1.Lease, owns bool, from string) (*coordinationv1.Lease, error) {
	leases := l.client.Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	if lease != nil {
		renewed := lease.DeepCopy()
		renewed.Spec.RenewTime = &now
		out, err := leases.Update(ctx, renewed, metav1.UpdateOptions{})
		if err == nil {
			return out, nil
		}
		// Changed or deleted by someone else: look at it afresh below.
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if !owns {
			return nil, nil // the simulator it is assigned to has taken it
		}
	}
	switch {
	case lease == nil && from != "":
		// Taken over from the simulator it moved from, in one write: a
		// dead simulator's thousands of nodes must be taken before their
		// Leases lapse. If that one no longer holds it, look below.
		if out, err := l.takeFrom(ctx, name, from, now); err == nil {
			return out, nil
		}
	case lease == nil:
		// A new node has no Lease yet: try making it before looking.
		created, err := leases.Create(ctx, l.newLease(name, uid, now), metav1.CreateOptions{})
		if err == nil {
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	current, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		created, err := leases.Create(ctx, l.newLease(name, uid, now), metav1.CreateOptions{})
		if err != nil {
			return nil, err // client-go hands back an empty object with errors
		}
		return created, nil
	}
	if err != nil {
		return nil, err
	}
	if !l.mayTake(current, now.Time) {
		return nil, nil
	}
	taken := current.DeepCopy()
	fresh := l.newLease(name, uid, now)
	taken.Spec, taken.OwnerReferences = fresh.Spec, fresh.OwnerReferences // the node may be a namesake
	out, err := leases.Update(ctx, taken, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// takeFrom takes node's Lease if holder still holds it: a JSON patch that
// tests the holder, so it takes nothing from anyone else.
func (l *leases) takeFrom(ctx context.Context, name, holder string, now metav1.MicroTime) (*coordinationv1.Lease, error) {
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/spec/holderIdentity", "value": holder},
		{"op": "add", "path": "/spec/holderIdentity", "value": l.holder},
		{"op": "add", "path": "/spec/leaseDurationSeconds", "value": int32(l.duration / time.Second)},
		{"op": "add", "path": "/spec/renewTime", "value": now},
	})
	if err != nil {
		return nil, err
	}
	return l.client.Leases(corev1.NamespaceNodeLease).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
}

// mayTake reports whether a node's Lease may be taken by its assignee: it
// is free, or its holder is a simulator (dead, or one the node moved from).
func (l *leases) mayTake(lease *coordinationv1.Lease, now time.Time) bool {
	if l.free(lease, now) {
		return true
	}
	return l.members.isKnown(*lease.Spec.HolderIdentity)
}

// free reports whether a Lease is ours, unheld or lapsed.
func (l *leases) free(lease *coordinationv1.Lease, now time.Time) bool {
	s := lease.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == l.holder || *s.HolderIdentity == "" || s.RenewTime == nil {
		return true
	}
	d := l.duration
	if s.LeaseDurationSeconds != nil {
		d = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	return now.After(s.RenewTime.Add(d))
}

func (l *leases) newLease(name string, uid types.UID, now metav1.MicroTime) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: corev1.NamespaceNodeLease,
			// Owned by the node, so it goes when the node does.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: name, UID: uid,
			}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(l.holder),
			LeaseDurationSeconds: ptr.To(int32(l.duration / time.Second)),
			RenewTime:            &now,
		},
	}
}

package kubeletsim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

const (
	us       = "kubesim-test"
	nodeName = "n1"
	nodeUID  = types.UID("uid-1")
)

// newTestLeases is a leases of holder us over a fake clientset holding objs.
func newTestLeases(t *testing.T, objs ...runtime.Object) (*leases, *fake.Clientset) {
	return newTestLeasesRenewedEvery(t, 10*time.Second, objs...)
}

// newTestLeasesRenewedEvery is newTestLeases, renewing every interval.
func newTestLeasesRenewedEvery(t *testing.T, interval time.Duration, objs ...runtime.Object) (*leases, *fake.Clientset) {
	client := fake.NewClientset(objs...)
	l := newLeases(client.CoordinationV1(), us, 40*time.Second, interval, nil)
	t.Cleanup(l.queue.ShutDown)
	return l, client
}

// heldLease is node n1's Lease as holder left it, renewed at renewed.
func heldLease(holder string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: nodeName, Namespace: corev1.NamespaceNodeLease,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: "uid-of-another"}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
}

// stored is node n1's Lease as the API server has it.
func stored(t *testing.T, client *fake.Clientset) *coordinationv1.Lease {
	t.Helper()
	lease, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Lease: %v", err)
	}
	return lease
}

// wantOurs checks that lease is held by us for node n1 and renewed since
// before.
func wantOurs(t *testing.T, lease *coordinationv1.Lease, before time.Time) {
	t.Helper()
	if h := lease.Spec.HolderIdentity; h == nil || *h != us {
		t.Errorf("holder %v, want %s", h, us)
	}
	if r := lease.Spec.RenewTime; r == nil || r.Time.Before(before) {
		t.Errorf("renewed at %v, want after %v", r, before)
	}
	if refs := lease.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].UID != nodeUID {
		t.Errorf("owners %+v, want node %s of UID %s", refs, nodeName, nodeUID)
	}
}

// A new node's Lease is created, with us as holder and the node as owner,
// and the node is then ours.
func TestLeaseOfANewNodeIsCreatedAndHeld(t *testing.T) {
	l, client := newTestLeases(t)
	var acquired []string
	l.onAcquired = func(node string) { acquired = append(acquired, node) }
	before := time.Now().Add(-time.Second)
	l.want(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: nodeUID}})
	l.renew(context.Background(), nodeName)
	wantOurs(t, stored(t, client), before)
	if !l.holds(nodeName) || len(acquired) != 1 {
		t.Errorf("holds %v, acquired %v; want the node held and acquired once", l.holds(nodeName), acquired)
	}
}

func TestLeaseRenewalMovesRenewTime(t *testing.T) {
	ours := heldLease(us, time.Now().Add(-time.Hour))
	ours.OwnerReferences[0].UID = nodeUID
	l, client := newTestLeases(t, ours)
	before := time.Now().Add(-time.Second)
	out, err := l.write(context.Background(), nodeName, nodeUID, ours, true, "")
	if err != nil {
		t.Fatal(err)
	}
	wantOurs(t, out, before)
	wantOurs(t, stored(t, client), before)
}

// Another holder that renewed lately owns the node: its Lease is left as
// it is, and write says so with nil, nil.
func TestLeaseOfAnotherLiveHolderIsLeftAlone(t *testing.T) {
	theirs := heldLease("someone-else", time.Now())
	l, client := newTestLeases(t, theirs)
	out, err := l.write(context.Background(), nodeName, nodeUID, nil, true, "")
	if out != nil || err != nil {
		t.Fatalf("write = %v, %v; want nil, nil", out, err)
	}
	if h := *stored(t, client).Spec.HolderIdentity; h != "someone-else" {
		t.Errorf("holder %s, want someone-else's Lease untouched", h)
	}
}

// A lapsed Lease of another holder is taken over, owner reference and all:
// the node may be a namesake of the one it was made for.
func TestLapsedLeaseOfAnotherHolderIsTakenOver(t *testing.T) {
	l, client := newTestLeases(t, heldLease("someone-else", time.Now().Add(-time.Hour)))
	before := time.Now().Add(-time.Second)
	out, err := l.write(context.Background(), nodeName, nodeUID, nil, true, "")
	if err != nil || out == nil {
		t.Fatalf("write = %v, %v; want the Lease taken", out, err)
	}
	wantOurs(t, out, before)
	wantOurs(t, stored(t, client), before)
}

// A failed write returns no Lease (client-go hands back an empty object
// with its errors), and our copy stays held, to be renewed on the retry.
func TestFailedLeaseWriteKeepsOurCopy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		verb   string // the request that fails
		stored bool   // whether the API server has the Lease
	}{
		{"renewal fails", "update", true},
		{"recreation fails", "create", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := heldLease(us, time.Now().Add(-time.Hour))
			var objs []runtime.Object
			if tc.stored {
				objs = append(objs, ours.DeepCopy())
			}
			l, client := newTestLeases(t, objs...)
			client.PrependReactor(tc.verb, "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("etcd is down")
			})
			out, err := l.write(context.Background(), nodeName, nodeUID, ours, true, "")
			if out != nil || err == nil {
				t.Errorf("write = %v, %v; want nil and the error", out, err)
			}
			l.wanted[nodeName], l.held[nodeName] = nodeUID, ours
			l.renew(context.Background(), nodeName)
			if l.held[nodeName] != ours {
				t.Errorf("held %v after a failed renewal, want our copy kept", l.held[nodeName])
			}
		})
	}
}

// A Lease deleted under us (NotFound on renewal) is made again.
func TestLeaseDeletedUnderUsIsRecreated(t *testing.T) {
	l, client := newTestLeases(t)
	ours := heldLease(us, time.Now().Add(-time.Hour))
	l.wanted[nodeName], l.held[nodeName] = nodeUID, ours
	before := time.Now().Add(-time.Second)
	l.renew(context.Background(), nodeName)
	wantOurs(t, stored(t, client), before)
	if held := l.held[nodeName]; held == ours || held == nil {
		t.Errorf("held %v, want the recreated Lease", held)
	}
}

func TestLeaseFree(t *testing.T) {
	now := time.Now()
	lapsedByDefault := heldLease("someone-else", now.Add(-41*time.Second))
	lapsedByDefault.Spec.LeaseDurationSeconds = nil
	unrenewed := heldLease("someone-else", now)
	unrenewed.Spec.RenewTime = nil
	l, _ := newTestLeases(t)
	for name, tc := range map[string]struct {
		lease *coordinationv1.Lease
		free  bool
	}{
		"ours":                            {heldLease(us, now), true},
		"no holder":                       {heldLease("", now), true},
		"never renewed":                   {unrenewed, true},
		"renewed lately by another":       {heldLease("someone-else", now.Add(-39*time.Second)), false},
		"lapsed, by its own duration":     {heldLease("someone-else", now.Add(-41*time.Second)), true},
		"lapsed, by our default duration": {lapsedByDefault, true},
	} {
		if got := l.free(tc.lease, now); got != tc.free {
			t.Errorf("%s: free = %v, want %v", name, got, tc.free)
		}
	}
}

// Any positive renew interval works, however short: one of a nanosecond
// once reached the jitter as an empty range and panicked.
func TestLeaseRenewalOfATinyIntervalIsScheduled(t *testing.T) {
	l, _ := newTestLeasesRenewedEvery(t, time.Nanosecond)
	l.want(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: nodeUID}})
	l.renew(context.Background(), nodeName)
	if !l.holds(nodeName) {
		t.Error("the Lease is not held")
	}
}

// While the API server fails, a node's renewals back off from 1s to the
// renew interval, not every second; one success brings back the usual
// interval, and the next failure starts again from 1s.
func TestLeaseRenewalsBackOffWhileTheyFail(t *testing.T) {
	l, client := newTestLeases(t)
	queue := &delayQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	t.Cleanup(queue.ShutDown)
	l.queue = queue
	failing := true
	client.PrependReactor("*", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failing {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	l.want(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: nodeUID}})
	for range 6 {
		l.renew(context.Background(), nodeName)
	}
	s := time.Second
	if want := []time.Duration{s, 2 * s, 4 * s, 8 * s, 10 * s, 10 * s}; !slices.Equal(queue.waits, want) {
		t.Fatalf("retried after %v, want %v", queue.waits, want)
	}
	failing = false
	l.renew(context.Background(), nodeName)
	if next := queue.waits[6]; next < 8*s || next > 10*s {
		t.Errorf("renewed, then again after %s, want the usual 8-10s", next)
	}
	failing = true
	l.renew(context.Background(), nodeName)
	if retry := queue.waits[7]; retry != s {
		t.Errorf("failed again, retried after %s, want 1s", retry)
	}
}

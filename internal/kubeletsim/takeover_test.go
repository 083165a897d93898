package kubeletsim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// fixedMembers assigns every node to owner; known are the simulators.
type fixedMembers struct {
	owns  string
	known []string
}

func (f *fixedMembers) owner(string) string        { return f.owns }
func (f *fixedMembers) isKnown(holder string) bool { return slices.Contains(f.known, holder) }

// only is the assignment of one live simulator.
func only(holder string) *assignment { return newAssignment([]string{holder}) }

// writes are the Lease requests the fake API server got that change
// something.
func writes(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "leases" && !slices.Contains([]string{"get", "list", "watch"}, a.GetVerb()) {
			out = append(out, a.GetVerb())
		}
	}
	return out
}

func testNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: nodeUID}}
}

// takeOver runs what a change of the live set from prev to next does for
// node n1 on l: its queued renewal, if any.
func takeOver(t *testing.T, l *leases, prev, next *assignment) {
	t.Helper()
	l.reassign(prev, next)
	if l.queue.Len() > 0 {
		name, _ := l.queue.Get()
		l.renew(context.Background(), name)
		l.queue.Done(name)
	}
}

// A node whose simulator died comes to us: its Lease, renewed a moment
// ago by the dead one, is taken at once, in one write, and the node (and
// so its pods) is ours.
func TestLeaseOfADeadSimulatorIsTakenAtOnceInOneWrite(t *testing.T) {
	l, client := newTestLeases(t, heldLease("dead", time.Now()))
	var acquired []string
	l.onAcquired = func(node string) { acquired = append(acquired, node) }
	l.members = &fixedMembers{owns: us, known: []string{us, "dead"}}
	l.want(testNode())
	firstLook(l) // want's, before the take-over
	client.ClearActions()
	before := time.Now().Add(-time.Second)
	takeOver(t, l, only("dead"), only(us))
	if h := *stored(t, client).Spec.HolderIdentity; h != us {
		t.Fatalf("holder %s, want us", h)
	}
	if r := stored(t, client).Spec.RenewTime; r.Time.Before(before) {
		t.Errorf("renewed at %v, want now", r)
	}
	if w := writes(client); !slices.Equal(w, []string{"patch"}) {
		t.Errorf("writes %v, want one patch", w)
	}
	if !l.holds(nodeName) || !slices.Equal(acquired, []string{nodeName}) {
		t.Errorf("holds %v, acquired %v: want the node ours", l.holds(nodeName), acquired)
	}
}

// The simulator the node moved from no longer holds its Lease: another
// simulator does (one we have not seen die yet, say). The one-write take
// finds out and the Lease is taken after a fresh look, as any simulator's.
func TestTakeOverFromTheWrongHolderLooksAgain(t *testing.T) {
	l, client := newTestLeases(t, heldLease("third", time.Now()))
	l.members = &fixedMembers{owns: us, known: []string{us, "dead", "third"}}
	l.want(testNode())
	firstLook(l)
	takeOver(t, l, only("dead"), only(us))
	if h := *stored(t, client).Spec.HolderIdentity; h != us || !l.holds(nodeName) {
		t.Errorf("holder %s, held %v; want the Lease ours", h, l.holds(nodeName))
	}
}

// A live holder that is no simulator (a real kubelet) keeps its Lease,
// even of a node assigned to us.
func TestLeaseOfALiveHolderThatIsNoSimulatorIsLeftAlone(t *testing.T) {
	l, client := newTestLeases(t, heldLease("kubelet", time.Now()))
	l.members = &fixedMembers{owns: us, known: []string{us, "dead"}}
	l.want(testNode())
	firstLook(l)
	takeOver(t, l, only("dead"), only(us))
	if h := *stored(t, client).Spec.HolderIdentity; h != "kubelet" || l.holds(nodeName) {
		t.Errorf("holder %s, held %v; want the kubelet's Lease left alone", h, l.holds(nodeName))
	}
}

// A node assigned to another simulator is not taken, not even looked at:
// no request at all, however stale its Lease.
func TestNodeOfAnotherSimulatorIsNotTaken(t *testing.T) {
	l, client := newTestLeases(t, heldLease("other", time.Now().Add(-time.Hour)))
	l.members = &fixedMembers{owns: "other", known: []string{us, "other"}}
	l.want(testNode())
	client.ClearActions()
	l.renew(context.Background(), nodeName)
	if a := client.Actions(); len(a) != 0 || l.holds(nodeName) {
		t.Errorf("requests %v, held %v; want none and the node not ours", a, l.holds(nodeName))
	}
}

// A node that moves to a simulator that has just joined stops being
// managed here at once, but its Lease is renewed on schedule until the
// joiner has taken it, so it never lapses in between; then it is let go
// without another write.
func TestNodeMovingAwayIsRenewedUntilTaken(t *testing.T) {
	l, client := newTestLeases(t)
	members := &fixedMembers{owns: us, known: []string{us}}
	l.members = members
	l.want(testNode())
	l.renew(context.Background(), nodeName)
	if !l.holds(nodeName) {
		t.Fatal("the node is not ours to begin with")
	}
	members.owns, members.known = "joiner", []string{us, "joiner"}
	l.reassign(only(us), only("joiner"))
	if l.holds(nodeName) {
		t.Error("a node assigned to the joiner is still managed here")
	}
	// Not yet taken: renewed, and kept.
	before := time.Now().Add(-time.Second)
	l.renew(context.Background(), nodeName)
	if lease := stored(t, client); *lease.Spec.HolderIdentity != us || lease.Spec.RenewTime.Time.Before(before) {
		t.Errorf("Lease %+v, want it renewed by us until the joiner takes it", lease.Spec)
	}
	// Taken: our renewal conflicts, and the node is let go.
	taken := stored(t, client)
	taken.Spec.HolderIdentity = ptrTo("joiner")
	if _, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(context.Background(), taken, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	client.PrependReactor("update", "leases", conflictOnTaken(client))
	client.ClearActions()
	l.renew(context.Background(), nodeName)
	if h := *stored(t, client).Spec.HolderIdentity; h != "joiner" {
		t.Errorf("holder %s, want the joiner's Lease left alone", h)
	}
	if w := writes(client); len(w) != 1 {
		t.Errorf("writes %v, want only the renewal that found it taken", w)
	}
	l.mu.Lock()
	_, held := l.held[nodeName]
	l.mu.Unlock()
	if held {
		t.Error("the node is still held after the joiner took it")
	}
}

// A node that goes to a joiner and comes back (the joiner stopped) is
// taken again at once, whether or not the joiner had taken it meanwhile,
// though it was still held here: the Lease is ours and the node managed.
func TestNodeComingBackIsTakenAgainAtOnce(t *testing.T) {
	for _, joinerTookIt := range []bool{true, false} {
		l, client := newTestLeases(t)
		members := &fixedMembers{owns: us, known: []string{us, "joiner"}}
		l.members = members
		var acquired []string
		l.onAcquired = func(node string) { acquired = append(acquired, node) }
		l.want(testNode())
		l.renew(context.Background(), nodeName)
		firstLook(l)
		members.owns = "joiner"
		l.reassign(only(us), only("joiner"))
		if joinerTookIt {
			taken := stored(t, client)
			taken.Spec.HolderIdentity = ptrTo("joiner")
			if _, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(context.Background(), taken, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		members.owns = us
		acquired = nil
		before := time.Now().Add(-time.Second)
		takeOver(t, l, only("joiner"), only(us))
		lease := stored(t, client)
		if *lease.Spec.HolderIdentity != us || lease.Spec.RenewTime.Time.Before(before) || !l.holds(nodeName) || !slices.Equal(acquired, []string{nodeName}) {
			t.Errorf("joiner took it: %v: Lease %+v, holds %v, acquired %v; want it ours again at once and managed",
				joinerTookIt, lease.Spec, l.holds(nodeName), acquired)
		}
	}
}

func ptrTo(s string) *string { return &s }

// firstLook takes the renewal want queued off the queue, unprocessed.
func firstLook(l *leases) {
	name, _ := l.queue.Get()
	l.queue.Done(name)
}

// conflictOnTaken makes the fake API server refuse an update of a Lease
// from a holder other than the stored one, as the real one refuses our
// stale copy of a Lease another has taken since.
func conflictOnTaken(client *fake.Clientset) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj := action.(clienttesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		current, err := client.Tracker().Get(action.GetResource(), obj.Namespace, obj.Name)
		if err != nil {
			return false, nil, nil
		}
		if *current.(*coordinationv1.Lease).Spec.HolderIdentity != *obj.Spec.HolderIdentity {
			return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), obj.Name, errors.New("changed"))
		}
		return false, nil, nil
	}
}

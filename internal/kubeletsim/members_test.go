package kubeletsim

import (
	"context"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// announcement is holder's announcement Lease, renewed at renewed.
func announcement(holder string, renewed time.Time, duration time.Duration) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: memberLeaseName(holder), Namespace: corev1.NamespaceNodeLease,
			Labels: map[string]string{MemberLabel: "member"},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To(int32(duration / time.Second)),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
}

// waitLive waits until the live set m last told of is want.
func waitLive(t *testing.T, changes <-chan []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.After(10 * time.Second)
	var last []string
	for {
		select {
		case last = <-changes:
			if slices.Equal(last, want) {
				return
			}
		case <-deadline:
			t.Fatalf("live simulators %v, want %v", last, want)
		}
	}
}

// A simulator announces itself, shares the nodes with the live simulators
// it finds, drops one that lapses (killed) or releases (stopped) at once,
// deletes announcements lapsed long ago, and releases its own when it stops.
func TestMembersFollowTheLiveSimulators(t *testing.T) {
	const nodeLease = 40 * time.Second
	now := time.Now()
	client := fake.NewClientset(
		announcement("killed", now, 2*time.Second),
		announcement("stopping", now, 8*time.Second),
		announcement("long-gone", now.Add(-time.Hour), 8*time.Second),
	)
	changes := make(chan []string, 16)
	m := newMembers(client, us, nodeLease, func(_, next *assignment) { changes <- next.live })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.start(ctx); err != nil {
		t.Fatal(err)
	}
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	own, err := leases.Get(ctx, memberLeaseName(us), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no announcement of our own: %v", err)
	}
	if own.Labels[MemberLabel] != "member" || !time.Now().Before(lapsesAt(own)) {
		t.Errorf("our announcement %+v, want it labelled and live", own)
	}
	waitLive(t, changes, us, "killed", "stopping")
	if !m.isKnown("long-gone") {
		t.Error("a lapsed simulator is not known: its nodes' Leases would wait to lapse")
	}
	stopped := make(chan struct{})
	go func() { m.run(ctx); close(stopped) }()

	// The killed one lapses 2 s after its last renewal, with no event.
	waitLive(t, changes, us, "stopping")
	// The stopping one releases its announcement: gone at once.
	m2 := newMembers(client, "stopping", nodeLease, nil)
	m2.release()
	waitLive(t, changes, us)
	if !m.isKnown("killed") || !m.isKnown("stopping") {
		t.Error("lapsed simulators are no longer known")
	}
	if _, err := leases.Get(ctx, memberLeaseName("long-gone"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an announcement lapsed an hour ago is still there (%v)", err)
	}
	cancel()
	<-stopped
	own, err = leases.Get(context.Background(), memberLeaseName(us), metav1.GetOptions{})
	if err != nil || time.Now().Before(lapsesAt(own)) {
		t.Errorf("our announcement after stopping: %v, %v; want it lapsed", own, err)
	}
}

func TestMemberLeaseNames(t *testing.T) {
	for holder, want := range map[string]string{
		"kubesim-kubesim":              "kubelet-sim-kubesim-kubesim-",
		"kubesim-kubelet-sim@Host.one": "kubelet-sim-kubesim-kubelet-sim-host-one-",
	} {
		got := memberLeaseName(holder)
		if len(got) != len(want)+8 || got[:len(want)] != want {
			t.Errorf("%s: %s, want %s and a hash", holder, got, want)
		}
	}
	if memberLeaseName("a@b") == memberLeaseName("a.b") {
		t.Error("holders that differ in characters names cannot hold share a Lease")
	}
}

func TestMemberTiming(t *testing.T) {
	for nodeLease, want := range map[time.Duration][2]time.Duration{
		50 * time.Second:  {8 * time.Second, 2 * time.Second},
		200 * time.Second: {8 * time.Second, 2 * time.Second},
		20 * time.Second:  {4 * time.Second, time.Second},
		5 * time.Second:   {2 * time.Second, 500 * time.Millisecond},
	} {
		if d, i := memberTiming(nodeLease); d != want[0] || i != want[1] {
			t.Errorf("node Leases of %s: announcements of %s renewed every %s, want %v", nodeLease, d, i, want)
		}
	}
}

package dpdb

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

const ns = DefaultNamespace

func holderOf(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	l, err := c.CoordinationV1().Leases(ns).Get(context.Background(), lockLease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

func heldLease(holder string, renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: lockLease, Namespace: ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: ptr.To[int32](10),
			RenewTime: &metav1.MicroTime{Time: renewed}},
	}
}

func TestLockAllOrNone(t *testing.T) {
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 200 * time.Millisecond
	ctx := context.Background()
	red, blue := fake.NewClientset(heldLease("someone", time.Now())), fake.NewClientset()
	// Taken in name order: blue's, then red's, which is held: none is
	// kept, blue's is given back.
	_, err := acquireAll(ctx, ns, "me", []lockTarget{{"red", red}, {"blue", blue}})
	if err == nil || !strings.Contains(err.Error(), "cluster red") || !strings.Contains(err.Error(), "someone") {
		t.Fatalf("acquiring with red held: %v, want an error naming red and its holder", err)
	}
	if h := holderOf(t, blue); h != "" {
		t.Errorf("blue's lock held by %q after a failed acquisition, want released", h)
	}
	if h := holderOf(t, red); h != "someone" {
		t.Errorf("red's lock holder %q, want someone's untouched", h)
	}
	red = fake.NewClientset()

	// An expired holder is taken over; release gives back only our own.
	blue = fake.NewClientset(heldLease("dead", time.Now().Add(-time.Minute)))
	lock, err := acquireAll(ctx, ns, "me", []lockTarget{{"red", red}, {"blue", blue}})
	if err != nil {
		t.Fatalf("acquiring over an expired holder: %v", err)
	}
	if holderOf(t, red) != "me" || holderOf(t, blue) != "me" {
		t.Fatalf("holders %q, %q, want me", holderOf(t, red), holderOf(t, blue))
	}
	if _, err := acquireAll(ctx, ns, "other", []lockTarget{{"blue", blue}}); err == nil {
		t.Error("a second holder acquired a held lock")
	}
	lock.release(ctx)
	if holderOf(t, red) != "" || holderOf(t, blue) != "" {
		t.Errorf("after release: holders %q, %q", holderOf(t, red), holderOf(t, blue))
	}
	if _, err := acquireAll(ctx, ns, "other", []lockTarget{{"blue", blue}}); err != nil {
		t.Errorf("acquiring a released lock: %v", err)
	}
}

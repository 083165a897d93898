package dpdb

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// admissionFixture: the DPDB web (minAvailable) covers this cluster's
// app=web pods, 3 healthy as its counted child shows, and federates red's
// PDB shop/web. Pod web-0 is covered, db-0 is not, web-1 is not ready.
func admissionFixture(t *testing.T, minAvailable int32, red *fake.Clientset) *fakeFederation {
	t.Helper()
	d := webDPDB(minAvailable, policyv1alpha1.FederatedPDB{Cluster: "red", Name: "web"})
	return newFakeFederation(t, map[string]*fake.Clientset{"red": red}, []*policyv1alpha1.DistributedPodDisruptionBudget{d},
		countedPDB("web", 3, 3), pod("web-0", "web", true), pod("web-1", "web", false), pod("db-0", "db", true))
}

func (f *fakeFederation) evict(name string, dryRun bool) verdict {
	return f.c.webhook.admitEviction(f.ctx, shop, name, dryRun)
}

func wantRefused(t *testing.T, v verdict, reason string) {
	t.Helper()
	if v.allowed || v.reason != reason {
		t.Errorf("verdict %+v, want refused: %q", v, reason)
	}
}

// wantLockReleased checks that an eviction took the lock of this cluster
// and red, and gave it back.
func (f *fakeFederation) wantLockReleased(red *fake.Clientset) {
	f.t.Helper()
	if f.leaseHolder(f.local) != "" || f.leaseHolder(red) != "" {
		f.t.Errorf("lock holders after a refusal: %q, %q, want taken and released", f.leaseHolder(f.local), f.leaseHolder(red))
	}
}

// shortLockWait makes a held lock refuse quickly.
func shortLockWait(t *testing.T) {
	old := lockWait
	lockWait = 100 * time.Millisecond
	t.Cleanup(func() { lockWait = old })
}

// Within the federation's budget an eviction is admitted under the lock of
// every cluster, which stays held, refusing the next eviction, until the
// child PDB counts the pod out.
func TestAdmitEvictionWithinBudget(t *testing.T) {
	shortLockWait(t)
	red := redCounted()
	f := admissionFixture(t, 5, red) // 6 healthy, 5 required
	f.waitReached("red")

	if v := f.evict("web-0", false); !v.allowed {
		t.Fatalf("eviction refused: %q", v.reason)
	}
	for cluster, client := range map[string]*fake.Clientset{"blue": f.local, "red": red} {
		if h := f.leaseHolder(client); !strings.HasPrefix(h, "blue/shop/web-0/") {
			t.Errorf("lock in %s held by %q, want this eviction", cluster, h)
		}
	}
	v := f.evict("web-1", false) // not ready: spends no budget, takes no lock
	if !v.allowed {
		t.Errorf("evicting an unready pod: %q, want allowed", v.reason)
	}
	v = f.evict("web-0", false)
	if v.allowed || !strings.HasPrefix(v.reason, "the federation's eviction lock is busy: lock in cluster blue: held by blue/shop/web-0/") {
		t.Errorf("a second eviction while the lock is held: %+v, want refused as busy", v)
	}

	child := countedPDB("web", 2, 3) // the disruption controller counts web-0 out
	if _, err := f.local.PolicyV1().PodDisruptionBudgets(shop).UpdateStatus(f.ctx, child, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the lock is released in both clusters", func() bool {
		return f.leaseHolder(f.local) == "" && f.leaseHolder(red) == ""
	})
}

// Over the budget an eviction is refused, with the count, and the lock it
// took to decide is given back.
func TestAdmitEvictionOverBudget(t *testing.T) {
	red := redCounted()
	f := admissionFixture(t, 6, red) // 6 healthy, 6 required
	f.waitReached("red")

	wantRefused(t, f.evict("web-0", false),
		"DistributedPodDisruptionBudget shop/web: the federation allows no disruption now (6 healthy of 6 required)")
	f.wantLockReleased(red)
}

// An unreachable member cluster fails closed, before any lock is taken.
func TestAdmitEvictionFailsClosedOnUnreachableMember(t *testing.T) {
	red := redCounted()
	red.PrependReactor("list", "poddisruptionbudgets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	f := admissionFixture(t, 1, red)
	f.waitFor("red's probe fails", func() bool {
		_, why := f.c.remotes.client("red")
		return strings.Contains(why, "connection refused")
	})

	wantRefused(t, f.evict("web-0", false),
		"DistributedPodDisruptionBudget shop/web: member red:shop/web: cluster red unreachable: connection refused")
	if h := f.leaseHolder(f.local); h != "none" {
		t.Errorf("lock in this cluster %q, want never taken", h)
	}
}

// A member not reached for three probe intervals fails closed.
func TestAdmitEvictionFailsClosedOnStaleMember(t *testing.T) {
	f := admissionFixture(t, 1, redCounted())
	f.waitReached("red")
	f.clock.SetTime(f.clock.Now().Add(4 * probeEvery))

	wantRefused(t, f.evict("web-0", false),
		"DistributedPodDisruptionBudget shop/web: member red:shop/web: cluster red unreachable: not reached for 4h0m0s")
}

// A member PDB the disruption controller has not counted fails closed, and
// the lock is given back.
func TestAdmitEvictionFailsClosedOnUncountedMember(t *testing.T) {
	uncounted := countedPDB("web", 3, 3)
	uncounted.Status.ObservedGeneration = 0
	red := fake.NewClientset(uncounted)
	f := admissionFixture(t, 1, red)
	f.waitReached("red")

	wantRefused(t, f.evict("web-0", false),
		"DistributedPodDisruptionBudget shop/web: refusing while a member cannot be read: red:shop/web: the disruption controller has not counted its pods yet")
	f.wantLockReleased(red)
}

// A lock another eviction holds in a member cluster refuses the eviction,
// and this cluster's lock, taken first, is given back.
func TestAdmitEvictionRefusesWhileLockHeld(t *testing.T) {
	shortLockWait(t)
	red := fake.NewClientset(countedPDB("web", 3, 3), heldLease("someone", time.Now()))
	f := admissionFixture(t, 1, red)
	f.waitReached("red")

	wantRefused(t, f.evict("web-0", false), "the federation's eviction lock is busy: lock in cluster red: held by someone; retry")
	if h := f.leaseHolder(f.local); h != "" {
		t.Errorf("lock in this cluster held by %q after the refusal, want released", h)
	}
	if h := f.leaseHolder(red); h != "someone" {
		t.Errorf("red's lock held by %q, want someone's untouched", h)
	}
}

// A dry run decides, without the lock.
func TestAdmitEvictionDryRunTakesNoLock(t *testing.T) {
	red := redCounted()
	f := admissionFixture(t, 5, red)
	f.waitReached("red")

	if v := f.evict("web-0", true); !v.allowed {
		t.Fatalf("dry run refused: %q", v.reason)
	}
	if f.leaseHolder(f.local) != "none" || f.leaseHolder(red) != "none" {
		t.Errorf("a dry run took the lock: %q, %q", f.leaseHolder(f.local), f.leaseHolder(red))
	}

	// Still decided: over the budget, a dry run is refused.
	f = admissionFixture(t, 6, redCounted())
	f.waitReached("red")
	wantRefused(t, f.evict("web-0", true),
		"DistributedPodDisruptionBudget shop/web: the federation allows no disruption now (6 healthy of 6 required)")
}

// Pods no DPDB covers, and pods that are not there, are not the webhook's
// to refuse, even with every member unreachable.
func TestAdmitEvictionOutsideBudgets(t *testing.T) {
	f := admissionFixture(t, 6, redCounted())
	f.clock.SetTime(f.clock.Now().Add(4 * probeEvery))
	for _, name := range []string{"db-0", "web-1", "gone"} {
		if v := f.evict(name, false); !v.allowed {
			t.Errorf("evicting %s: %q, want allowed", name, v.reason)
		}
	}
	if h := f.leaseHolder(f.local); h != "none" {
		t.Errorf("lock taken for pods outside any budget: %q", h)
	}
}

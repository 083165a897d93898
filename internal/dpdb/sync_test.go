package dpdb

import (
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// web federates red's PDB shop/web and this cluster's shop/cart.
func syncFixture(t *testing.T, minAvailable int32) *fakeFederation {
	t.Helper()
	red := redCounted()
	d := webDPDB(minAvailable, policyv1alpha1.FederatedPDB{Cluster: "red", Name: "web"}, policyv1alpha1.FederatedPDB{Name: "cart"})
	f := newFakeFederation(t, map[string]*fake.Clientset{"red": red}, []*policyv1alpha1.DistributedPodDisruptionBudget{d},
		countedPDB("cart", 2, 2))
	f.waitReached("red")
	return f
}

func (f *fakeFederation) sync(key string) {
	f.t.Helper()
	if err := f.c.sync(f.ctx, key); err != nil {
		f.t.Fatalf("sync %s: %v", key, err)
	}
}

func (f *fakeFederation) child(name string) *policyv1.PodDisruptionBudget {
	f.t.Helper()
	pdb, err := f.local.PolicyV1().PodDisruptionBudgets(shop).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("child PDB %s: %v", name, err)
	}
	return pdb
}

func condition(t *testing.T, st policyv1alpha1.DistributedPodDisruptionBudgetStatus, typ, status, reason string) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(st.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, st.Conditions)
	}
	if string(c.Status) != status || c.Reason != reason {
		t.Errorf("%s: %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, status, reason)
	}
	return c
}

// A first sync creates the child, owned by the DPDB, with the federation's
// minAvailable, and writes every member's observation; once the
// disruption controller has counted the child, the DPDB is Ready with the
// child's allowance.
func TestSyncWritesFederatedStatus(t *testing.T) {
	f := syncFixture(t, 4)
	f.sync("shop/web")

	child := f.child("web")
	if child.Spec.MinAvailable == nil || child.Spec.MinAvailable.IntValue() != 0 {
		t.Errorf("child minAvailable %v, want 0 (4 required, 5 healthy in members)", child.Spec.MinAvailable)
	}
	if !metav1.IsControlledBy(child, webDPDB(4)) || child.Labels[ChildLabel] != "web" {
		t.Errorf("child %v, labels %v: want controlled by DPDB web and labelled", child.OwnerReferences, child.Labels)
	}
	st := f.status("web")
	if st.Federated != "2/2" || st.CurrentHealthy != 5 || st.ExpectedPods != 5 || st.DesiredHealthy != 4 || st.ChildPDB != "web" || st.DisruptionsAllowed != 0 {
		t.Errorf("status %+v, want 2/2 federated, 5 of 5 healthy, 4 desired, child web, 0 allowed until it is counted", st)
	}
	at := metav1.NewTime(f.clock.Now())
	want := []policyv1alpha1.MemberStatus{
		{FederatedPDB: policyv1alpha1.FederatedPDB{Cluster: "red", Name: "web"}, Observed: true, CurrentHealthy: 3, ExpectedPods: 3, ObservedAt: &at},
		{FederatedPDB: policyv1alpha1.FederatedPDB{Name: "cart"}, Observed: true, CurrentHealthy: 2, ExpectedPods: 2, ObservedAt: &at},
	}
	if len(st.Members) != len(want) {
		t.Fatalf("members %+v, want %+v", st.Members, want)
	}
	for i := range want {
		got := st.Members[i]
		if got.FederatedPDB != want[i].FederatedPDB || got.Observed != want[i].Observed || got.CurrentHealthy != want[i].CurrentHealthy ||
			got.ExpectedPods != want[i].ExpectedPods || got.Message != "" || got.ObservedAt == nil || !got.ObservedAt.Equal(&at) {
			t.Errorf("member %d: %+v, want %+v", i, got, want[i])
		}
	}
	condition(t, st, policyv1alpha1.ConditionReady, "False", policyv1alpha1.ReasonChildNotObserved)
	condition(t, st, policyv1alpha1.ConditionDegraded, "False", policyv1alpha1.ReasonAllMembersHealthy)

	// The disruption controller counts the child: 2 healthy pods here.
	child.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: child.Generation, CurrentHealthy: 2, ExpectedPods: 2, DisruptionsAllowed: 2}
	if _, err := f.local.PolicyV1().PodDisruptionBudgets(shop).UpdateStatus(f.ctx, child, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the caches hold the counted child and the written status", func() bool {
		pdb, err := f.c.pdbs.PodDisruptionBudgets(shop).Get("web")
		obj, _, _ := f.c.dpdbs.GetIndexer().GetByKey("shop/web")
		d, _ := asDPDB(obj)
		return err == nil && pdb.Status.ExpectedPods == 2 && d != nil && d.Status.ChildPDB == "web"
	})
	f.sync("shop/web")
	st = f.status("web")
	if st.CurrentHealthy != 7 || st.ExpectedPods != 7 || st.DisruptionsAllowed != 2 {
		t.Errorf("status %+v, want 7 of 7 healthy and the child's 2 allowed", st)
	}
	ready := condition(t, st, policyv1alpha1.ConditionReady, "True", policyv1alpha1.ReasonFederated)
	if want := "child PDB web allows 2: 7 healthy of 4 required across this DPDB and 2 members"; ready.Message != want {
		t.Errorf("Ready message %q, want %q", ready.Message, want)
	}
}

// A member not reached for three probe intervals fails closed: the child
// lets no pod go, and the status says which member and why.
func TestSyncFailsClosedOnStaleMember(t *testing.T) {
	f := syncFixture(t, 4)
	probed := f.clock.Now()
	f.clock.SetTime(probed.Add(4 * probeEvery))
	f.sync("shop/web")

	if got := f.child("web").Spec.MinAvailable.IntValue(); got != FailClosedMinAvailable {
		t.Errorf("child minAvailable %d, want %d (closed)", got, FailClosedMinAvailable)
	}
	st := f.status("web")
	if st.Federated != "1/2" || st.DisruptionsAllowed != 0 {
		t.Errorf("status %+v, want 1/2 federated and 0 allowed", st)
	}
	red := st.Members[0]
	if red.Observed || red.Message != "cluster red unreachable: not reached for 4h0m0s" {
		t.Errorf("red: %+v, want unobserved, not reached for 4h", red)
	}
	if red.ObservedAt == nil || !red.ObservedAt.Time.Equal(probed) {
		t.Errorf("red observed at %v, want the last probe, %v", red.ObservedAt, probed)
	}
	degraded := condition(t, st, policyv1alpha1.ConditionDegraded, "True", policyv1alpha1.ReasonMemberUnavailable)
	if !strings.Contains(degraded.Message, "red:shop/web: cluster red unreachable") {
		t.Errorf("Degraded message %q, want it to name red", degraded.Message)
	}
	condition(t, st, policyv1alpha1.ConditionReady, "False", policyv1alpha1.ReasonMemberUnavailable)
}

// A member in a cluster the federation Secret does not name fails closed.
func TestSyncFailsClosedOnUnknownCluster(t *testing.T) {
	d := webDPDB(1, policyv1alpha1.FederatedPDB{Cluster: "green", Name: "web"})
	f := newFakeFederation(t, nil, []*policyv1alpha1.DistributedPodDisruptionBudget{d})
	f.sync("shop/web")

	if got := f.child("web").Spec.MinAvailable.IntValue(); got != FailClosedMinAvailable {
		t.Errorf("child minAvailable %d, want %d (closed)", got, FailClosedMinAvailable)
	}
	st := f.status("web")
	want := "cluster green unknown: Secret kubesim-dpdb/federation has no kubeconfig for it (run kubesim federate)"
	if len(st.Members) != 1 || st.Members[0].Observed || st.Members[0].Message != want || st.Members[0].ObservedAt != nil {
		t.Errorf("members %+v, want green unobserved: %q", st.Members, want)
	}
}

// A PDB of the DPDB's name that it does not own is left alone and
// reported.
func TestSyncLeavesForeignPDB(t *testing.T) {
	f := newFakeFederation(t, nil, []*policyv1alpha1.DistributedPodDisruptionBudget{webDPDB(1)}, countedPDB("web", 3, 3))
	f.sync("shop/web")

	if child := f.child("web"); child.Spec.MinAvailable != nil || len(child.OwnerReferences) > 0 {
		t.Errorf("foreign PDB changed: %+v", child)
	}
	st := f.status("web")
	ready := condition(t, st, policyv1alpha1.ConditionReady, "False", policyv1alpha1.ReasonChildConflict)
	if !strings.Contains(ready.Message, "shop/web exists that this DPDB does not own") {
		t.Errorf("Ready message %q", ready.Message)
	}
	if st.ChildPDB != "" {
		t.Errorf("child %q, want none", st.ChildPDB)
	}
}

// An unchanged federation is not written again.
func TestSyncWritesOnlyChanges(t *testing.T) {
	f := syncFixture(t, 4)
	f.sync("shop/web")
	f.waitFor("the cache holds the written status", func() bool {
		obj, _, _ := f.c.dpdbs.GetIndexer().GetByKey("shop/web")
		d, _ := asDPDB(obj)
		return d != nil && d.Status.ChildPDB == "web"
	})
	f.waitFor("the cache holds the child", func() bool {
		_, err := f.c.pdbs.PodDisruptionBudgets(shop).Get("web")
		return err == nil
	})
	f.clock.SetTime(f.clock.Now().Add(time.Second))
	dynBefore, localBefore := len(f.dyn.Actions()), len(f.local.Actions())
	f.sync("shop/web")
	for _, a := range append(f.dyn.Actions()[dynBefore:], f.local.Actions()[localBefore:]...) {
		if a.GetVerb() != "list" && a.GetVerb() != "watch" && a.GetVerb() != "get" {
			t.Errorf("an unchanged sync wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

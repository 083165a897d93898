package dpdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// The fake federation of the sync and admission tests: this cluster,
// "blue", and other clusters, each a fake clientset; DPDBs served by a
// fake dynamic client.
const (
	thisCluster = "blue"
	shop        = "shop" // the namespace of the DPDBs and pods
)

// probeEvery is the tests' probe interval: long enough that each member
// is probed once, at start, so its staleness follows the fake clock only.
const probeEvery = time.Hour

type fakeFederation struct {
	t       *testing.T
	ctx     context.Context
	local   *fake.Clientset
	dyn     *dynamicfake.FakeDynamicClient
	members map[string]*fake.Clientset
	clock   *clocktesting.FakePassiveClock
	c       *Controller
}

// newFakeFederation starts a controller (without workers: the tests call
// sync themselves) over fakes. members are the other clusters the
// federation Secret names; local holds this cluster's objects.
func newFakeFederation(t *testing.T, members map[string]*fake.Clientset, dpdbs []*policyv1alpha1.DistributedPodDisruptionBudget, local ...runtime.Object) *fakeFederation {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: DefaultFederationSecret}, Data: map[string][]byte{}}
	for name := range members {
		secret.Data[name] = kubeconfigOf(name)
	}
	f := &fakeFederation{
		t: t, ctx: ctx, members: members,
		local: fake.NewClientset(append(local, secret)...),
		dyn: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{policyv1alpha1.Resource: policyv1alpha1.Kind + "List"}, unstructuredDPDBs(t, dpdbs)...),
		clock: clocktesting.NewFakePassiveClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)),
	}
	f.local.PrependReactor("create", "poddisruptionbudgets", firstGeneration)
	opts := DefaultOptions()
	opts.ClusterName, opts.ProbeInterval = thisCluster, probeEvery
	c, err := newController(opts, Clients{Kube: f.local, Dynamic: f.dyn, Member: f.memberClient}, f.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	t.Cleanup(c.remotes.stop)
	if err := c.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// firstGeneration gives a created object generation 1, as the API server
// does (the fake leaves 0, which would pass for a counted child).
func firstGeneration(action clienttesting.Action) (bool, runtime.Object, error) {
	if obj, ok := action.(clienttesting.CreateAction).GetObject().(metav1.Object); ok {
		obj.SetGeneration(1)
	}
	return false, nil, nil
}

// memberClient is the Clients.Member seam: a member's fake, found by the
// server its kubeconfig names.
func (f *fakeFederation) memberClient(cfg *rest.Config) (kubernetes.Interface, error) {
	for name, client := range f.members {
		if cfg.Host == serverOf(name) {
			return client, nil
		}
	}
	return nil, fmt.Errorf("no fake cluster serves %s", cfg.Host)
}

func serverOf(cluster string) string { return "https://" + cluster + ".test" }

// kubeconfigOf is the federation Secret's kubeconfig for a cluster.
func kubeconfigOf(cluster string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: member, cluster: {server: %q}}]
users: [{name: member, user: {token: test}}]
contexts: [{name: member, context: {cluster: member, user: member}}]
current-context: member
`, serverOf(cluster))
}

func unstructuredDPDBs(t *testing.T, dpdbs []*policyv1alpha1.DistributedPodDisruptionBudget) []runtime.Object {
	var objs []runtime.Object
	for _, d := range dpdbs {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(policyv1alpha1.GroupVersion)
		u.SetKind(policyv1alpha1.Kind)
		objs = append(objs, u)
	}
	return objs
}

// waitFor waits, up to a deadline, until cond holds.
func (f *fakeFederation) waitFor(what string, cond func() bool) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		f.t.Fatalf("waiting until %s: %v", what, err)
	}
}

// waitReached waits until a member cluster has been probed and its PDBs
// are watched.
func (f *fakeFederation) waitReached(cluster string) {
	f.t.Helper()
	f.waitFor("cluster "+cluster+" is reached and watched", func() bool {
		f.c.remotes.mu.Lock()
		rc := f.c.remotes.clusters[cluster]
		f.c.remotes.mu.Unlock()
		client, _ := f.c.remotes.client(cluster)
		return client != nil && rc.synced != nil && rc.synced()
	})
}

// status is a DPDB's status as last written.
func (f *fakeFederation) status(name string) policyv1alpha1.DistributedPodDisruptionBudgetStatus {
	f.t.Helper()
	u, err := f.dyn.Resource(policyv1alpha1.Resource).Namespace(shop).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	d := &policyv1alpha1.DistributedPodDisruptionBudget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		f.t.Fatal(err)
	}
	return d.Status
}

// leaseHolder is who holds the eviction lock in a cluster: "" when it is
// free, "none" when it was never taken.
func (f *fakeFederation) leaseHolder(client kubernetes.Interface) string {
	l, err := client.CoordinationV1().Leases(DefaultNamespace).Get(f.ctx, lockLease, metav1.GetOptions{})
	if err != nil {
		return "none"
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

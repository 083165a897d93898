package dpdb

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// The informer converts each DPDB as it enters: the cache holds typed
// DPDBs, indexed by their members and clusters.
func TestDPDBCacheHoldsTypedDPDBs(t *testing.T) {
	d := webDPDB(1, policyv1alpha1.FederatedPDB{Cluster: "red", Name: "web"},
		policyv1alpha1.FederatedPDB{Cluster: thisCluster, Namespace: "db", Name: "db"})
	f := newFakeFederation(t, nil, []*policyv1alpha1.DistributedPodDisruptionBudget{d})

	obj, ok, err := f.c.dpdbs.GetIndexer().GetByKey("shop/web")
	if err != nil || !ok {
		t.Fatalf("shop/web not cached: %v", err)
	}
	if got, ok := obj.(*policyv1alpha1.DistributedPodDisruptionBudget); !ok || got.Spec.MinAvailable.IntValue() != 1 {
		t.Fatalf("cached %T %+v, want the typed DPDB", obj, obj)
	}
	for index, keys := range map[string][]string{
		memberIndex:  {"red/shop/web", "/db/db"}, // this cluster's name resolves to ""
		clusterIndex: {"red"},
	} {
		for _, key := range keys {
			if objs, _ := f.c.dpdbs.GetIndexer().ByIndex(index, key); len(objs) != 1 {
				t.Errorf("index %s, key %q: %d DPDBs, want web", index, key, len(objs))
			}
		}
	}
	if objs, _ := f.c.dpdbs.GetIndexer().ByIndex(clusterIndex, thisCluster); len(objs) != 0 {
		t.Errorf("this cluster indexed as a remote one")
	}
}

// The transform is idempotent, and a DPDB that does not convert stays in
// the cache under its key, so its sync reports why.
func TestTypedDPDB(t *testing.T) {
	u := unstructuredDPDBs(t, []*policyv1alpha1.DistributedPodDisruptionBudget{webDPDB(1)})[0]
	typed, err := typedDPDB(u)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := typedDPDB(typed); again != typed {
		t.Errorf("transforming a typed DPDB gave %v, want it unchanged", again)
	}

	broken := u.(*unstructured.Unstructured).DeepCopy()
	broken.Object["spec"] = map[string]any{"federation": "not a list"}
	obj, err := typedDPDB(broken)
	if err != nil {
		t.Fatalf("transform failed (it would stall the informer): %v", err)
	}
	if key, err := cache.MetaNamespaceKeyFunc(obj); err != nil || key != "shop/web" {
		t.Errorf("unconvertible DPDB keyed %q, %v, want shop/web", key, err)
	}
	want := runtime.DefaultUnstructuredConverter.FromUnstructured(broken.Object, &policyv1alpha1.DistributedPodDisruptionBudget{})
	if _, err := asDPDB(obj); err == nil || err.Error() != want.Error() {
		t.Errorf("reading the unconvertible DPDB: %v, want the conversion error %v", err, want)
	}
}

// A DPDB that does not convert fails its sync with the conversion error.
func TestSyncReportsUnconvertibleDPDB(t *testing.T) {
	f := newFakeFederation(t, nil, nil)
	u := unstructuredDPDBs(t, []*policyv1alpha1.DistributedPodDisruptionBudget{webDPDB(1)})[0].(*unstructured.Unstructured)
	u.Object["spec"] = map[string]any{"federation": "not a list"}
	if _, err := f.dyn.Resource(policyv1alpha1.Resource).Namespace(shop).Create(f.ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the cache holds shop/web", func() bool {
		_, ok, _ := f.c.dpdbs.GetIndexer().GetByKey("shop/web")
		return ok
	})
	want := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &policyv1alpha1.DistributedPodDisruptionBudget{})
	if err := f.c.sync(f.ctx, "shop/web"); err == nil || err.Error() != want.Error() {
		t.Errorf("sync of an unconvertible DPDB: %v, want the conversion error %v", err, want)
	}
}

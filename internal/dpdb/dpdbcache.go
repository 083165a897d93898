package dpdb

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// The DPDB informer watches through the dynamic client, so it receives
// unstructured objects; typedDPDB converts each once, as it enters the
// informer, and everything downstream (indexes, sync, the webhook) reads
// the typed DistributedPodDisruptionBudget.

// unconvertible is a DPDB that did not convert (its schema should make
// that impossible). It stays in the cache, keyed like any object, so its
// sync reports why; failing the transform instead would fail the whole
// list and stall every DPDB.
type unconvertible struct {
	*unstructured.Unstructured
	err error
}

// typedDPDB is the DPDB informer's cache.TransformFunc. It passes through
// what is already converted, as a transform must be idempotent.
func typedDPDB(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	d := &policyv1alpha1.DistributedPodDisruptionBudget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return &unconvertible{Unstructured: u, err: err}, nil
	}
	return d, nil
}

var _ cache.TransformFunc = typedDPDB

// asDPDB reads a DPDB from the informer's cache.
func asDPDB(obj any) (*policyv1alpha1.DistributedPodDisruptionBudget, error) {
	switch o := obj.(type) {
	case *policyv1alpha1.DistributedPodDisruptionBudget:
		return o, nil
	case *unconvertible:
		return nil, o.err
	}
	return nil, fmt.Errorf("not a DistributedPodDisruptionBudget: %T", obj)
}

// indexMembers indexes a DPDB by key of each member it federates; an
// empty key is not indexed.
func indexMembers(clusterName string, key func(member) string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		d, err := asDPDB(obj)
		if err != nil {
			return nil, nil
		}
		var keys []string
		for _, m := range resolveMembers(d, clusterName) {
			if k := key(m); k != "" {
				keys = append(keys, k)
			}
		}
		return keys, nil
	}
}

package scenario

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name:     "rolledOut",
		describe: func(a *v1alpha1.Assertion) string { return "rolled out " + a.RolledOut.Name },
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.rolledOut(a.RolledOut) },
	})
}

func (v *view) rolledOut(w *v1alpha1.WorkloadRef) (bool, string, string) {
	ns := namespaceOrDefault(w.Namespace)
	d, err := v.t.client.AppsV1().Deployments(ns).Get(v.ctx, w.Name, metav1.GetOptions{})
	if err != nil {
		return false, "", err.Error()
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	ok := s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
	return ok, fmt.Sprintf("%d updated and available", want),
		fmt.Sprintf("replicas=%d updated=%d available=%d", s.Replicas, s.UpdatedReplicas, s.AvailableReplicas)
}

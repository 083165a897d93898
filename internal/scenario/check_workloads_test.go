package scenario

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func kueueWorkload(name, localQueue, admittedIn string, conds map[string]string) *unstructured.Unstructured {
	var cs []any
	for typ, status := range conds {
		cs = append(cs, map[string]any{"type": typ, "status": status, "reason": "R", "message": "", "lastTransitionTime": "2026-11-28T08:00:00Z"})
	}
	status := map[string]any{"conditions": cs}
	if admittedIn != "" {
		status["admission"] = map[string]any{"clusterQueue": admittedIn, "podSetAssignments": []any{}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"queueName": localQueue, "podSets": []any{}},
		"status":   status,
	}}
}

// Workloads are counted by Kueue's conditions, in the ClusterQueue that
// admitted them or, pending, the one their LocalQueue feeds.
func TestWorkloadsAssertion(t *testing.T) {
	lq := func(name, cq string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec":     map[string]any{"clusterQueue": cq},
		}}
	}
	objs := []runtime.Object{
		lq("team-a", "a"), lq("team-b", "b"),
		kueueWorkload("w1", "team-a", "a", map[string]string{"QuotaReserved": "True", "Admitted": "True"}),
		kueueWorkload("w2", "team-a", "", map[string]string{"QuotaReserved": "False"}),
		kueueWorkload("w3", "team-a", "", map[string]string{"QuotaReserved": "False", "Evicted": "True", "Preempted": "True"}),
		kueueWorkload("w4", "team-b", "b", map[string]string{"QuotaReserved": "True", "Admitted": "True", "Finished": "True"}),
		kueueWorkload("w5", "team-b", "b", map[string]string{"QuotaReserved": "True", "Admitted": "False"}),
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		workloadsResource: "WorkloadList", localQueuesResource: "LocalQueueList",
	}, objs...)
	v := &view{t: &target{dynamic: dyn}, ctx: context.Background()}
	for _, tc := range []struct {
		a    v1alpha1.WorkloadsAssertion
		want string
	}{
		{v1alpha1.WorkloadsAssertion{Queue: "a", State: "admitted"}, "1"},
		{v1alpha1.WorkloadsAssertion{Queue: "a", State: "pending"}, "2"},
		{v1alpha1.WorkloadsAssertion{Queue: "a", State: "preempted"}, "1"},
		{v1alpha1.WorkloadsAssertion{Queue: "b", State: "finished"}, "1"},
		{v1alpha1.WorkloadsAssertion{Queue: "b", State: "admitted"}, "0"},
		{v1alpha1.WorkloadsAssertion{Queue: "b", State: "quotaReserved"}, "1"},
		{v1alpha1.WorkloadsAssertion{LocalQueue: "team-a", State: "evicted"}, "1"},
		{v1alpha1.WorkloadsAssertion{State: "pending"}, "2"},
	} {
		tc.a.Count = v1alpha1.Count{Min: ptr.To(0)}
		if _, _, got := v.countWorkloads(&tc.a); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.a, got, tc.want)
		}
	}
}

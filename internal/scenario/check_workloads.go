package scenario

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

var (
	workloadsResource   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	localQueuesResource = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	clusterQueues       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
)

func init() {
	checkKinds.register(&checkKind{
		name: "workloads",
		validate: func(a *v1alpha1.Assertion) error {
			if a.Workloads.State == "" {
				return fmt.Errorf("workloads.state: missing; give one of %v", v1alpha1.WorkloadStates)
			}
			return nil
		},
		describe: func(a *v1alpha1.Assertion) string {
			w := a.Workloads
			of := "all queues"
			switch {
			case w.Queue != "":
				of = "ClusterQueue " + w.Queue
			case w.LocalQueue != "":
				of = "LocalQueue " + namespaceOrDefault(w.Namespace) + "/" + w.LocalQueue
			}
			return fmt.Sprintf("workloads of %s %s %s", of, w.State, countText(w.Count))
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.countWorkloads(a.Workloads) },
		watch:    func(t *target) { t.watchResource(workloadsResource) },
	})
}

// countWorkloads counts the Workloads of the queue in the state, as
// Kueue's conditions on them say.
func (v *view) countWorkloads(a *v1alpha1.WorkloadsAssertion) (bool, string, string) {
	ns := metav1.NamespaceAll
	if a.LocalQueue != "" {
		ns = namespaceOrDefault(a.Namespace)
	}
	list, err := v.t.dynamic.Resource(workloadsResource).Namespace(ns).List(v.ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", fmt.Sprintf("Kueue's Workloads: %v (is the cluster made with --addons kueue?)", err)
	}
	// Which ClusterQueue each LocalQueue feeds: a pending Workload names
	// only its LocalQueue.
	feeds := map[string]string{}
	if a.Queue != "" {
		lqs, err := v.t.dynamic.Resource(localQueuesResource).Namespace(metav1.NamespaceAll).List(v.ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err.Error()
		}
		for _, lq := range lqs.Items {
			cq, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
			feeds[lq.GetNamespace()+"/"+lq.GetName()] = cq
		}
	}
	n := 0
	for i := range list.Items {
		w := &kueuev1beta2.Workload{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, w); err != nil {
			return false, "", err.Error()
		}
		if a.LocalQueue != "" && string(w.Spec.QueueName) != a.LocalQueue {
			continue
		}
		if a.Queue != "" {
			cq := feeds[w.Namespace+"/"+string(w.Spec.QueueName)]
			if w.Status.Admission != nil {
				cq = string(w.Status.Admission.ClusterQueue)
			}
			if cq != a.Queue {
				continue
			}
		}
		if workloadIn(w.Status.Conditions, a.State) {
			n++
		}
	}
	return countOK(a.Count, n), "count " + countText(a.Count), fmt.Sprintf("%d", n)
}

// workloadIn reports whether a Workload's conditions put it in state.
func workloadIn(conds []metav1.Condition, state string) bool {
	is := func(typ string) bool { return meta.IsStatusConditionTrue(conds, typ) }
	finished := is(kueuev1beta2.WorkloadFinished)
	switch state {
	case "pending":
		return !finished && !is(kueuev1beta2.WorkloadQuotaReserved)
	case "quotaReserved":
		return !finished && is(kueuev1beta2.WorkloadQuotaReserved) && !is(kueuev1beta2.WorkloadAdmitted)
	case "admitted":
		return !finished && is(kueuev1beta2.WorkloadAdmitted)
	case "finished":
		return finished
	case "preempted":
		return is(kueuev1beta2.WorkloadPreempted)
	case "evicted":
		return is(kueuev1beta2.WorkloadEvicted)
	}
	return false
}

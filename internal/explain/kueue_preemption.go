package explain

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Victim is a Workload Kueue preempted to make room for another.
type Victim struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Owner      string `json:"owner,omitempty"` // job/NAME
	LocalQueue string `json:"localQueue,omitempty"`
	// Reason is Kueue's (InClusterQueue, InCohortReclamation, …).
	Reason string `json:"reason"`
}

// Kueue names the preemptor only in its victim's Preempted condition:
// "Preempted to accommodate a workload (UID: <uid>, JobUID: <uid>) due to
// …". The preemptor's own status says no more than "Pending the
// preemption of N workload(s)".
const preemptorMark = "(UID: "

// preemptorUID is the uid of the Workload w was preempted for, "" if w
// is not (or no longer) preempted.
func preemptorUID(w *kueuev1beta2.Workload) types.UID {
	c := meta.FindStatusCondition(w.Status.Conditions, kueuev1beta2.WorkloadPreempted)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	_, rest, ok := strings.Cut(c.Message, preemptorMark)
	if !ok {
		return ""
	}
	uid, _, ok := strings.Cut(rest, ",")
	if !ok {
		return ""
	}
	return types.UID(uid)
}

// preemption reads both ends of Kueue's preemptions from w: the
// Workloads preempted for it, and the one it was preempted for
// (namespace/name, "" if none or gone).
func (k *Kueue) preemption(ctx context.Context, w *kueuev1beta2.Workload) (victims []Victim, by string, err error) {
	list, err := k.dyn.Resource(workloads).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	byUID := preemptorUID(w)
	for i := range list.Items {
		v, err := toWorkload(&list.Items[i])
		if err != nil {
			return nil, "", err
		}
		if byUID != "" && v.UID == byUID {
			by = v.Namespace + "/" + v.Name
		}
		if preemptorUID(v) != w.UID {
			continue
		}
		victim := Victim{Namespace: v.Namespace, Name: v.Name, LocalQueue: string(v.Spec.QueueName),
			Reason: meta.FindStatusCondition(v.Status.Conditions, kueuev1beta2.WorkloadPreempted).Reason}
		if o := metav1.GetControllerOf(v); o != nil {
			victim.Owner = strings.ToLower(o.Kind) + "/" + o.Name
		}
		victims = append(victims, victim)
	}
	return victims, by, nil
}

package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// What follows reads Kueue's own state — a Workload's conditions and
// admission, the events Kueue wrote on it and its Job — and says what it
// says. Nothing is recomputed: a pending Workload's reason is Kueue's
// QuotaReserved message.

var workloads = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// Kueue is the cluster's Kueue as explain reads it.
type Kueue struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

// NewKueue reads Kueue's state through these clients.
func NewKueue(kube kubernetes.Interface, dyn dynamic.Interface) *Kueue {
	return &Kueue{kube: kube, dyn: dyn}
}

// WorkloadExplanation is what Kueue says of one Workload.
type WorkloadExplanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Owner is the Job (kind/name) the Workload is for.
	Owner         string `json:"owner,omitempty"`
	LocalQueue    string `json:"localQueue,omitempty"`
	ClusterQueue  string `json:"clusterQueue,omitempty"`
	PriorityClass string `json:"priorityClass,omitempty"`
	Priority      *int32 `json:"priority,omitempty"`
	// State is the state Kueue's own columns show: Pending, QuotaReserved
	// (waiting for admission checks), Admitted or Finished.
	State string `json:"state"`
	// Why is Kueue's word for the state: the message of the condition
	// that decides it (for a pending Workload, why it has no quota).
	Why       string      `json:"why,omitempty"`
	Since     *time.Time  `json:"since,omitempty"`
	Admission []PodSetUse `json:"admission,omitempty"`
	// Position is the pending Workload's place in its queues, from
	// Kueue's visibility API; nil when it is not pending or the API does
	// not answer.
	Position *QueuePosition `json:"position,omitempty"`
	// Preempted are the Workloads Kueue preempted to make room for this
	// one, while their Preempted condition says so (until readmitted).
	Preempted []Victim `json:"preempted,omitempty"`
	// PreemptedBy is the Workload (namespace/name) this one was
	// preempted for, while it is marked preempted.
	PreemptedBy string      `json:"preemptedBy,omitempty"`
	Requeues    int32       `json:"requeues,omitempty"`
	RequeueAt   *time.Time  `json:"requeueAt,omitempty"`
	Conditions  []Condition `json:"conditions,omitempty"`
	Events      []Event     `json:"events,omitempty"`
}

// QueuePosition is a pending Workload's place in its queues, counted from
// 1: the next admitted is the first.
type QueuePosition struct {
	InClusterQueue int32 `json:"inClusterQueue"`
	InLocalQueue   int32 `json:"inLocalQueue"`
}

// PodSetUse is a pod set's admission: its count, flavor per resource and
// the quota it uses.
type PodSetUse struct {
	Name    string            `json:"name"`
	Count   int32             `json:"count,omitempty"`
	Flavors map[string]string `json:"flavors,omitempty"`
	Usage   map[string]string `json:"usage,omitempty"`
}

// ErrNoKueue is returned for a cluster made without the kueue add-on.
var ErrNoKueue = fmt.Errorf("the cluster runs no Kueue: create it with --addons kueue")

// Workload explains the Workload name in namespace, or the Workload of
// the Job or of the pod of that name.
func (k *Kueue) Workload(ctx context.Context, namespace, name string) (*WorkloadExplanation, error) {
	w, err := k.find(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	x := &WorkloadExplanation{
		Namespace: w.Namespace, Name: w.Name,
		LocalQueue: string(w.Spec.QueueName), Priority: w.Spec.Priority,
	}
	if ref := w.Spec.PriorityClassRef; ref != nil {
		x.PriorityClass = ref.Name
	}
	if o := metav1.GetControllerOf(w); o != nil {
		x.Owner = strings.ToLower(o.Kind) + "/" + o.Name
	}
	for _, c := range w.Status.Conditions {
		x.Conditions = append(x.Conditions, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time})
	}
	if a := w.Status.Admission; a != nil {
		x.ClusterQueue = string(a.ClusterQueue)
		for _, ps := range a.PodSetAssignments {
			use := PodSetUse{Name: string(ps.Name), Flavors: map[string]string{}, Usage: map[string]string{}}
			if ps.Count != nil {
				use.Count = *ps.Count
			}
			for r, f := range ps.Flavors {
				use.Flavors[string(r)] = string(f)
			}
			for r, q := range ps.ResourceUsage {
				use.Usage[string(r)] = q.String()
			}
			x.Admission = append(x.Admission, use)
		}
	} else if x.LocalQueue != "" {
		x.ClusterQueue = k.clusterQueueOf(ctx, w.Namespace, x.LocalQueue)
	}
	if r := w.Status.RequeueState; r != nil {
		x.Requeues = ptrValue(r.Count)
		if r.RequeueAt != nil {
			t := r.RequeueAt.Time
			x.RequeueAt = &t
		}
	}
	x.State, x.Why, x.Since = state(w.Status.Conditions)
	if x.Why == "" && x.State == "Pending" {
		if x.Why, err = k.Bypassed(ctx, w); err != nil {
			return nil, err
		}
	}
	if x.Preempted, x.PreemptedBy, err = k.preemption(ctx, w); err != nil {
		return nil, err
	}
	if x.State == "Pending" && x.LocalQueue != "" {
		x.Position = k.position(ctx, w.Namespace, x.LocalQueue, w.Name)
	}
	x.Events, err = k.events(ctx, w)
	return x, err
}

// position is where Kueue's visibility API puts the Workload among the
// pending ones of its LocalQueue; nil if it is not there or the API does
// not answer (Kueue restarting, or its VisibilityOnDemand gate off).
func (k *Kueue) position(ctx context.Context, namespace, localQueue, name string) *QueuePosition {
	path := fmt.Sprintf("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues/%s/pendingworkloads", namespace, localQueue)
	raw, err := k.kube.Discovery().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil
	}
	var summary struct {
		Items []struct {
			Metadata       struct{ Name string } `json:"metadata"`
			InClusterQueue int32                 `json:"positionInClusterQueue"`
			InLocalQueue   int32                 `json:"positionInLocalQueue"`
		} `json:"items"`
	}
	if json.Unmarshal(raw, &summary) != nil {
		return nil
	}
	for _, it := range summary.Items {
		if it.Metadata.Name == name {
			return &QueuePosition{InClusterQueue: it.InClusterQueue + 1, InLocalQueue: it.InLocalQueue + 1}
		}
	}
	return nil
}

// state is the Workload's state as Kueue's printer columns read it
// (FINISHED, ADMITTED, RESERVED IN), with the deciding condition.
func state(conds []metav1.Condition) (string, string, *time.Time) {
	for _, s := range []struct{ cond, state string }{
		{kueuev1beta2.WorkloadFinished, "Finished"},
		{kueuev1beta2.WorkloadAdmitted, "Admitted"},
		{kueuev1beta2.WorkloadQuotaReserved, "QuotaReserved"},
	} {
		if c := meta.FindStatusCondition(conds, s.cond); c != nil && c.Status == metav1.ConditionTrue {
			t := c.LastTransitionTime.Time
			return s.state, c.Message, &t
		}
	}
	if c := meta.FindStatusCondition(conds, kueuev1beta2.WorkloadQuotaReserved); c != nil {
		t := c.LastTransitionTime.Time
		return "Pending", c.Message, &t
	}
	return "Pending", "", nil
}

// Bypassed is why Kueue left w, pending with no condition, unevaluated,
// or "": with SchedulingEquivalenceHashing (on by default) Kueue parks a
// new Workload behind a pending one of its ClusterQueue that did not fit
// and has its scheduling shape (Kueue's own hash of pod sets, requests and
// priority), and writes no condition on it (unless the off-by-default
// UnadmittedWorkloadsExplicitStatus gate is on). The words are Kueue's,
// with the equivalent Workload and its reason.
func (k *Kueue) Bypassed(ctx context.Context, w *kueuev1beta2.Workload) (string, error) {
	if meta.FindStatusCondition(w.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved) != nil {
		return "", nil
	}
	twin, err := k.failedTwin(ctx, w)
	if twin == nil || err != nil {
		return "", err
	}
	return fmt.Sprintf("Bypassed scheduling evaluation because an equivalent workload recently failed: %s/%s: %s",
		twin.Namespace, twin.Name, meta.FindStatusCondition(twin.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved).Message), nil
}

// failedTwin is the pending Workload Bypassed names.
func (k *Kueue) failedTwin(ctx context.Context, w *kueuev1beta2.Workload) (*kueuev1beta2.Workload, error) {
	queues, err := k.dyn.Resource(workloads.GroupVersion().WithResource("localqueues")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	clusterQueue := map[string]string{} // namespace/LocalQueue → ClusterQueue
	for _, q := range queues.Items {
		cq, _, _ := unstructured.NestedString(q.Object, "spec", "clusterQueue")
		clusterQueue[q.GetNamespace()+"/"+q.GetName()] = cq
	}
	cqOf := func(o *kueuev1beta2.Workload) string { return clusterQueue[o.Namespace+"/"+string(o.Spec.QueueName)] }
	list, err := k.dyn.Resource(workloads).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	hash := workload.NewInfo(w).SchedulingHash
	for i := range list.Items {
		o, err := toWorkload(&list.Items[i])
		if err != nil {
			return nil, err
		}
		qr := meta.FindStatusCondition(o.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved)
		if o.UID == w.UID || cqOf(o) == "" || cqOf(o) != cqOf(w) || qr == nil || qr.Status != metav1.ConditionFalse {
			continue
		}
		if workload.NewInfo(o).SchedulingHash == hash {
			return o, nil
		}
	}
	return nil, nil
}

// find is the Workload of that name, or of the Job or pod of that name.
func (k *Kueue) find(ctx context.Context, namespace, name string) (*kueuev1beta2.Workload, error) {
	u, err := k.dyn.Resource(workloads).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if meta.IsNoMatchError(err) || (apierrors.IsNotFound(err) && isNoKind(err)) {
		return nil, ErrNoKueue
	}
	if err == nil {
		return toWorkload(u)
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	job := name
	if pod, err := k.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
		if o := metav1.GetControllerOf(pod); o != nil && o.Kind == "Job" {
			job = o.Name
		}
	}
	list, err := k.dyn.Resource(workloads).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if meta.IsNoMatchError(err) || (apierrors.IsNotFound(err) && isNoKind(err)) {
		return nil, ErrNoKueue
	}
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if o := metav1.GetControllerOf(&list.Items[i]); o != nil && o.Kind == "Job" && o.Name == job {
			return toWorkload(&list.Items[i])
		}
	}
	return nil, fmt.Errorf("no Workload, or Job or pod with one, named %q in namespace %s (kubectl get workloads -n %s lists them)", name, namespace, namespace)
}

// isNoKind tells a 404 for the whole resource (no such API) from one for
// the object: the former carries no details naming the object.
func isNoKind(err error) bool {
	status, ok := err.(apierrors.APIStatus)
	return ok && status.Status().Details != nil && status.Status().Details.Name == ""
}

func toWorkload(u *unstructured.Unstructured) (*kueuev1beta2.Workload, error) {
	w := &kueuev1beta2.Workload{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, w)
	return w, err
}

// clusterQueueOf is the ClusterQueue a LocalQueue feeds, "" if unknown.
func (k *Kueue) clusterQueueOf(ctx context.Context, namespace, localQueue string) string {
	lq, err := k.dyn.Resource(workloads.GroupVersion().WithResource("localqueues")).Namespace(namespace).Get(ctx, localQueue, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	cq, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
	return cq
}

// events are Kueue's events on the Workload and on its Job, oldest first.
func (k *Kueue) events(ctx context.Context, w *kueuev1beta2.Workload) ([]Event, error) {
	list, err := k.kube.CoreV1().Events(w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	owner := metav1.GetControllerOf(w)
	var out []Event
	for _, e := range list.Items {
		o := e.InvolvedObject
		onWorkload := o.Kind == "Workload" && o.Name == w.Name
		onJob := owner != nil && o.Kind == owner.Kind && o.Name == owner.Name && byKueue(&e)
		if !onWorkload && !onJob {
			continue
		}
		out = append(out, Event{Time: eventTime(e), On: strings.ToLower(o.Kind) + "/" + o.Name, Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count})
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Time.Compare(b.Time) })
	return out, nil
}

// byKueue reports whether Kueue wrote the event (its recorders' names
// have kueue in them: batch/job-kueue-controller), not the Job controller.
func byKueue(e *corev1.Event) bool {
	return strings.Contains(e.ReportingController, "kueue") || strings.Contains(e.Source.Component, "kueue")
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

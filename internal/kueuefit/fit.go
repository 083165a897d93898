// Package kueuefit answers "would Kueue admit this Job now, and if not,
// why?" with Kueue's own answer: the Job is submitted into a throwaway
// copy of the cluster (cluster.Fork) and what Kueue does with it there is
// read back — admitted, pending with Kueue's reason, or admitted once the
// workloads it preempts are gone. The cluster itself is never written to.
package kueuefit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/explain"
)

// Verdict is what Kueue did with the Job, in the words of the scenario
// step's expect.
type Verdict string

const (
	// Admitted: quota reserved and admitted (QuotaReserved: admission
	// checks still to pass), nothing preempted.
	Admitted      Verdict = "admitted"
	QuotaReserved Verdict = "quotaReserved"
	// Pending: Kueue keeps it queued; Why says what it lacks.
	Pending Verdict = "pending"
	// Preempts: Kueue evicts workloads to make room for it and admits it
	// once they are gone.
	Preempts Verdict = "preempts"
)

// Verdicts are the verdicts a step may expect.
var Verdicts = []Verdict{Admitted, QuotaReserved, Pending, Preempts}

// Answer is Kueue's decision on the Job.
type Answer struct {
	Job     string  `json:"job"` // namespace/name
	Verdict Verdict `json:"verdict"`
	// Why is Kueue's reason: its QuotaReserved message.
	Why string `json:"why,omitempty"`
	// Workload is explain's account of the Job's Workload in the copy,
	// when Kueue decided.
	Workload *explain.WorkloadExplanation `json:"workload"`
	// Preempted are the workloads Kueue evicted for it.
	Preempted []explain.Victim `json:"preempted,omitempty"`
}

var (
	jobs      = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	workloads = kueuev1beta2.SchemeGroupVersion.WithResource("workloads")
)

// CheckKueue refuses a cluster that runs no Kueue, before any copy of it
// is made.
func CheckKueue(cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := dc.ServerResourcesForGroupVersion(kueuev1beta2.SchemeGroupVersion.String()); err != nil {
		if apierrors.IsNotFound(err) {
			return explain.ErrNoKueue
		}
		return err
	}
	return nil
}

// Job is the one batch/v1 Job of objs, in namespace unless it names its
// own: what Kueue's batch/job integration, the one kubesim runs, manages.
func Job(objs []*unstructured.Unstructured, namespace string) (*unstructured.Unstructured, error) {
	if len(objs) != 1 || objs[0].GetAPIVersion() != "batch/v1" || objs[0].GetKind() != "Job" {
		what := make([]string, 0, len(objs))
		for _, o := range objs {
			what = append(what, o.GetKind())
		}
		if len(what) == 0 {
			what = append(what, "nothing")
		}
		return nil, fmt.Errorf("give one batch/v1 Job (the kind of Kueue's integration kubesim runs); got %s", strings.Join(what, ", "))
	}
	job := objs[0].DeepCopy()
	if job.GetName() == "" && job.GetGenerateName() == "" {
		return nil, errors.New("metadata.name: the Job has none; give it a name or a generateName")
	}
	if job.GetNamespace() == "" {
		job.SetNamespace(namespace)
	}
	return job, nil
}

// Ask submits job to the cluster at cfg (a copy: it is changed) and waits
// until Kueue has decided on its Workload: quota reserved, or pending
// with a reason, or preempting.
func Ask(ctx context.Context, cfg *rest.Config, job *unstructured.Unstructured) (*Answer, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	made, err := create(ctx, dyn, job)
	if err != nil {
		return nil, fmt.Errorf("the Job is refused: %w", err)
	}
	a := &Answer{Job: made.GetNamespace() + "/" + made.GetName()}
	if made.GetLabels()[constants.QueueLabel] == "" {
		return nil, fmt.Errorf("metadata.labels[%s]: the Job names no LocalQueue, so Kueue leaves it to the scheduler; label it with its queue", constants.QueueLabel)
	}
	k := explain.NewKueue(kube, dyn)
	w, err := decide(ctx, dyn, k, a, made)
	if err != nil {
		return nil, err
	}
	if a.Workload, err = k.Workload(ctx, w.Namespace, w.Name); err != nil {
		return nil, err
	}
	if a.Verdict == Pending && strings.Contains(a.Why, "Pending the preemption of") {
		a.Verdict, a.Preempted = Preempts, a.Workload.Preempted
	}
	return a, nil
}

// create submits job, again while the copy's API server says it is not
// ready for it: a fresh copy fills its caches after it reports ready, and
// client-go's own retries of a 429, timed on a scaled clock, are over
// before they are filled.
func create(ctx context.Context, dyn dynamic.Interface, job *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for {
		made, err := dyn.Resource(jobs).Namespace(job.GetNamespace()).Create(ctx, job, metav1.CreateOptions{})
		if err == nil || !apierrors.IsTooManyRequests(err) {
			return made, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(clusterclock.Stretch(100 * time.Millisecond)):
		}
	}
}

// notYet is an answer that says to ask again: the copy's caches are
// still filling ("storage is (re)initializing") or it is busy.
func notYet(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// settle is how long a Workload is watched for a condition Kueue may yet
// write: Admitted beside QuotaReserved (at once, unless admission checks
// are to pass), or any on a Workload Kueue may have parked unevaluated.
const settle = 2 * time.Second

// decide polls the Job's Workload until Kueue has decided on it, and sets
// the answer's verdict and reason.
func decide(ctx context.Context, dyn dynamic.Interface, k *explain.Kueue, a *Answer, job *unstructured.Unstructured) (*kueuev1beta2.Workload, error) {
	// Kueue's work takes real time, whatever the clock.
	poll, settle := clusterclock.Stretch(100*time.Millisecond), clusterclock.Stretch(settle)
	var seen, reserved time.Time
	var w *kueuev1beta2.Workload
	for {
		list, err := dyn.Resource(workloads).Namespace(job.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: constants.JobUIDLabel + "=" + string(job.GetUID())})
		if err != nil && ctx.Err() == nil && !notYet(err) {
			return nil, err
		}
		if err == nil && len(list.Items) > 0 {
			if w, err = toWorkload(&list.Items[0]); err != nil {
				return nil, err
			}
			if seen.IsZero() {
				seen = time.Now()
			}
			qr := meta.FindStatusCondition(w.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved)
			switch {
			case meta.IsStatusConditionTrue(w.Status.Conditions, kueuev1beta2.WorkloadAdmitted):
				a.Verdict = Admitted
				return w, nil
			case qr != nil && qr.Status == metav1.ConditionFalse:
				a.Verdict, a.Why = Pending, qr.Message
				return w, nil
			case qr != nil && reserved.IsZero():
				reserved = time.Now()
			case qr != nil && time.Since(reserved) >= settle:
				a.Verdict, a.Why = QuotaReserved, qr.Message
				return w, nil
			case qr == nil && time.Since(seen) >= settle:
				why, err := k.Bypassed(ctx, w)
				if err != nil && !notYet(err) {
					return nil, err
				}
				if why != "" {
					a.Verdict, a.Why = Pending, why
					return w, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			if w == nil {
				return nil, errors.New("Kueue made no Workload for the Job in time: is Kueue running (kubesim logs kueue)?")
			}
			return nil, fmt.Errorf("Kueue did not decide on Workload %s in time", w.Name)
		case <-time.After(poll):
		}
	}
}

func toWorkload(u *unstructured.Unstructured) (*kueuev1beta2.Workload, error) {
	w := &kueuev1beta2.Workload{}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, w)
	return w, err
}

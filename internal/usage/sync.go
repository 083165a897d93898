package usage

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// watchUsages keeps the model in step with the cluster's ResourceUsages
// and ClusterResourceUsages, metrics with its CustomMetrics and
// ExternalMetrics, and endpoints with its Metrics, and reports on each
// whether it was accepted.
func watchUsages(ctx context.Context, dyn dynamic.Interface, model *Model, metrics *Metrics, endpoints *Endpoints, r *reporter, counts *podCounts) (dynamicinformer.DynamicSharedInformerFactory, error) {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	handle := func(set func(u *unstructured.Unstructured) error, del func(u *unstructured.Unstructured)) cache.ResourceEventHandlerFuncs {
		apply := func(obj any) {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return
			}
			r.accepted(u, set(u))
		}
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    apply,
			UpdateFunc: func(_, obj any) { apply(obj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if u, ok := obj.(*unstructured.Unstructured); ok {
					del(u)
				}
			},
		}
	}
	watch := func(gvr schema.GroupVersionResource, set func(u *unstructured.Unstructured) error, del func(u *unstructured.Unstructured)) error {
		_, err := factory.ForResource(gvr).Informer().AddEventHandler(handle(set, del))
		return err
	}
	for _, w := range []struct {
		gvr schema.GroupVersionResource
		set func(*unstructured.Unstructured) error
		del func(*unstructured.Unstructured)
	}{
		{kwokv1alpha1.ResourceUsagesResource, typed(model.SetResourceUsage),
			func(u *unstructured.Unstructured) { model.DeleteResourceUsage(u.GetNamespace(), u.GetName()) }},
		{kwokv1alpha1.ClusterResourceUsagesResource, typed(model.SetClusterResourceUsage),
			func(u *unstructured.Unstructured) { model.DeleteClusterResourceUsage(u.GetName()) }},
		{v1alpha1.CustomMetricsResource, typed(func(cm *v1alpha1.CustomMetric) error {
			err := metrics.SetCustomMetric(cm)
			counts.enqueue(cm.Namespace, cm.Name, 0)
			return err
		}), func(u *unstructured.Unstructured) { metrics.DeleteCustomMetric(u.GetNamespace(), u.GetName()) }},
		{v1alpha1.ExternalMetricsResource, typed(metrics.SetExternalMetric),
			func(u *unstructured.Unstructured) { metrics.DeleteExternalMetric(u.GetNamespace(), u.GetName()) }},
		{kwokv1alpha1.MetricsResource, typed(endpoints.SetMetric),
			func(u *unstructured.Unstructured) { endpoints.DeleteMetric(u.GetName()) }},
	} {
		if err := watch(w.gvr, w.set, w.del); err != nil {
			return nil, err
		}
	}
	factory.Start(ctx.Done())
	return factory, nil
}

// reported are the kinds the reporter writes the status of: their
// resource, and what their Accepted condition and Warning say.
var reported = map[string]struct {
	gvr              schema.GroupVersionResource
	accepted         string
	invalid, failure string
}{
	kwokv1alpha1.ResourceUsageKind:        {kwokv1alpha1.ResourceUsagesResource, "every usage compiled", "InvalidUsage", "UsageFailed"},
	kwokv1alpha1.ClusterResourceUsageKind: {kwokv1alpha1.ClusterResourceUsagesResource, "every usage compiled", "InvalidUsage", "UsageFailed"},
	v1alpha1.CustomMetricKind:             {v1alpha1.CustomMetricsResource, "the metric is served", "InvalidMetric", "MetricFailed"},
	v1alpha1.ExternalMetricKind:           {v1alpha1.ExternalMetricsResource, "the metric is served", "InvalidMetric", "MetricFailed"},
	kwokv1alpha1.MetricKind:               {kwokv1alpha1.MetricsResource, "its metrics are served at spec.path", "InvalidMetric", "MetricFailed"},
}

// reporter tells users about their usage objects: the Accepted condition
// (whether every expression compiled) and Warning Events, one per object
// and message, for what failed.
type reporter struct {
	ctx      context.Context
	dyn      dynamic.Interface
	recorder events.EventRecorder

	mu     sync.Mutex
	warned map[string]bool // object UID + message
}

// maxWarned bounds the memory of warnings already given: past it they
// are forgotten, and may be given again.
const maxWarned = 10000

func newReporter(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface) *reporter {
	b := events.NewEventBroadcasterAdapterWithContext(ctx, kube)
	b.StartRecordingToSink(ctx.Done())
	return &reporter{ctx: ctx, dyn: dyn, recorder: b.NewRecorder(ComponentName), warned: map[string]bool{}}
}

// accepted sets the object's Accepted condition if it changed, and warns
// of an error once.
func (r *reporter) accepted(u *unstructured.Unstructured, err error) {
	kind := reported[u.GetKind()]
	cond := metav1.Condition{Type: kwokv1alpha1.UsageConditionAccepted, Status: metav1.ConditionTrue, Reason: "Compiled",
		Message: kind.accepted, ObservedGeneration: u.GetGeneration()}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, kind.invalid, err.Error()
		r.warn(u, kind.invalid, err.Error())
	}
	var status struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	other, _ := u.Object["status"].(map[string]any) // kept: a CustomMetric's pods
	if other != nil {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(other, &status)
	}
	if c := meta.FindStatusCondition(status.Conditions, cond.Type); c != nil &&
		c.Status == cond.Status && c.Message == cond.Message && c.ObservedGeneration == cond.ObservedGeneration {
		return
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	obj := u.DeepCopy()
	conds, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
	if err != nil {
		return
	}
	st := map[string]any{}
	for k, v := range other {
		st[k] = v
	}
	st["conditions"] = conds["conditions"]
	obj.Object["status"] = st
	if _, err := r.dyn.Resource(kind.gvr).Namespace(u.GetNamespace()).UpdateStatus(r.ctx, obj, metav1.UpdateOptions{}); err != nil {
		klog.Warningf("%s %s: writing its status: %v", u.GetKind(), u.GetName(), err)
	}
}

// evalFailed warns on the usage or metric object that it could not be
// evaluated (for a pod).
func (r *reporter) evalFailed(e *EvalError) {
	gvr := reported[e.Usage.Kind].gvr
	ref := &corev1.ObjectReference{APIVersion: gvr.GroupVersion().String(), Kind: e.Usage.Kind, Namespace: e.Usage.Namespace, Name: e.Usage.Name}
	r.warnRef(ref, e.Usage.String(), reported[e.Usage.Kind].failure, e.Err.Error())
}

func (r *reporter) warn(u *unstructured.Unstructured, reason, message string) {
	ref := &corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID()}
	r.warnRef(ref, string(u.GetUID()), reason, message)
}

func (r *reporter) warnRef(ref *corev1.ObjectReference, key, reason, message string) {
	key += "\x00" + message
	r.mu.Lock()
	if r.warned[key] {
		r.mu.Unlock()
		return
	}
	if len(r.warned) >= maxWarned {
		clear(r.warned)
	}
	r.warned[key] = true
	r.mu.Unlock()
	klog.Warningf("%s %s/%s: %s", ref.Kind, ref.Namespace, ref.Name, message)
	r.recorder.Eventf(ref, nil, corev1.EventTypeWarning, reason, "Evaluate", "%s", message)
}

// typed has set see the object as its kind's Go type.
func typed[T any](set func(*T) error) func(*unstructured.Unstructured) error {
	return func(u *unstructured.Unstructured) error {
		var obj T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj); err != nil {
			return err
		}
		return set(&obj)
	}
}

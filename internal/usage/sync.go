package usage

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// watchUsages keeps the model in step with the cluster's ResourceUsages
// and ClusterResourceUsages, and reports on each whether it compiled.
func watchUsages(ctx context.Context, dyn dynamic.Interface, model *Model, r *reporter) error {
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
	_, err := factory.ForResource(kwokv1alpha1.ResourceUsagesResource).Informer().AddEventHandler(handle(
		func(u *unstructured.Unstructured) error {
			var ru kwokv1alpha1.ResourceUsage
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ru); err != nil {
				return err
			}
			return model.SetResourceUsage(&ru)
		},
		func(u *unstructured.Unstructured) { model.DeleteResourceUsage(u.GetNamespace(), u.GetName()) }))
	if err != nil {
		return err
	}
	_, err = factory.ForResource(kwokv1alpha1.ClusterResourceUsagesResource).Informer().AddEventHandler(handle(
		func(u *unstructured.Unstructured) error {
			var cru kwokv1alpha1.ClusterResourceUsage
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cru); err != nil {
				return err
			}
			return model.SetClusterResourceUsage(&cru)
		},
		func(u *unstructured.Unstructured) { model.DeleteClusterResourceUsage(u.GetName()) }))
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	return nil
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
	cond := metav1.Condition{Type: kwokv1alpha1.UsageConditionAccepted, Status: metav1.ConditionTrue, Reason: "Compiled",
		Message: "every usage compiled", ObservedGeneration: u.GetGeneration()}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "InvalidUsage", err.Error()
		r.warn(u, "InvalidUsage", err.Error())
	}
	var status struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	if s, ok := u.Object["status"].(map[string]any); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(s, &status)
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
	obj.Object["status"] = conds
	gvr := kwokv1alpha1.ClusterResourceUsagesResource
	if u.GetKind() == kwokv1alpha1.ResourceUsageKind {
		gvr = kwokv1alpha1.ResourceUsagesResource
	}
	if _, err := r.dyn.Resource(gvr).Namespace(u.GetNamespace()).UpdateStatus(r.ctx, obj, metav1.UpdateOptions{}); err != nil {
		klog.Warningf("%s %s: writing its status: %v", u.GetKind(), u.GetName(), err)
	}
}

// evalFailed warns on the usage object that it could not be evaluated
// for a pod.
func (r *reporter) evalFailed(e *EvalError) {
	ref := &corev1.ObjectReference{APIVersion: kwokv1alpha1.GroupVersion, Kind: e.Usage.Kind, Namespace: e.Usage.Namespace, Name: e.Usage.Name}
	r.warnRef(ref, e.Usage.String(), "UsageFailed", e.Err.Error())
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

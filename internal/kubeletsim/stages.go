package kubeletsim

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/stage"
)

// stageWatcher follows the cluster's Stage objects and, whenever they
// change, hands the simulator the built-in stages with the user's laid
// over them. Changes in a burst (kubectl apply -f dir/) coalesce into one
// rebuild: the queue holds a single key.
type stageWatcher struct {
	builtin  []*stage.Stage
	informer cache.SharedIndexInformer
	recorder record.EventRecorder
	apply    func([]*stage.Stage) error
	queue    workqueue.TypedRateLimitingInterface[string]

	invalid reportedVersions
	// status writes each Stage's observedGeneration and, when it does not
	// compile, its Accepted condition; nil in tests.
	status dynamic.NamespaceableResourceInterface
	// unserved notes the Stages reported for naming a kind the API server
	// does not serve, by generation.
	unserved reportedVersions
}

const rebuildKey = "stages"

func newStageWatcher(factory dynamicinformer.DynamicSharedInformerFactory, builtin []*stage.Stage,
	recorder record.EventRecorder, apply func([]*stage.Stage) error) (*stageWatcher, error) {
	w := &stageWatcher{
		builtin:  builtin,
		informer: factory.ForResource(v1alpha1.StagesResource).Informer(),
		recorder: recorder,
		apply:    apply,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(newStageRetries(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "stages"}),
	}
	_, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.queue.Add(rebuildKey) },
		UpdateFunc: func(any, any) { w.queue.Add(rebuildKey) },
		DeleteFunc: func(any) { w.queue.Add(rebuildKey) },
	})
	return w, err
}

func (w *stageWatcher) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for {
		key, quit := w.queue.Get()
		if quit {
			return
		}
		if err := w.apply(w.stages()); err != nil {
			klog.ErrorS(err, "applying stages; retrying", "retries", w.queue.NumRequeues(key)+1)
			w.warnUnservedKinds(err)
			w.queue.AddRateLimited(key)
		} else {
			w.queue.Forget(key)
		}
		w.queue.Done(key)
	}
}

// stages compiles the user's Stages over the built-in ones. A Stage that
// does not compile is left out, reported once per version by a log line
// and a Warning Event on it.
func (w *stageWatcher) stages() []*stage.Stage {
	var user []*stage.Stage
	objs := w.informer.GetStore().List()
	sort.Slice(objs, func(i, j int) bool {
		return objs[i].(*unstructured.Unstructured).GetName() < objs[j].(*unstructured.Unstructured).GetName()
	})
	for _, obj := range objs {
		u := obj.(*unstructured.Unstructured)
		compiled, err := CompileStage(u)
		w.setAccepted(u, err)
		if err != nil {
			w.warnOnce(u, err)
			continue
		}
		user = append(user, compiled)
	}
	return stage.Merge(w.builtin, user)
}

// CompileStage compiles a Stage object as the simulator does.
func CompileStage(u *unstructured.Unstructured) (*stage.Stage, error) {
	s := &v1alpha1.Stage{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
		return nil, fmt.Errorf("stage %s: %w", u.GetName(), err)
	}
	compiled, err := stage.Compile(s)
	if err != nil {
		return nil, err
	}
	compiled.Revision, compiled.UID = u.GetResourceVersion(), u.GetUID()
	return compiled, nil
}

// setAccepted reports on the Stage that the simulator has read this
// generation (status.observedGeneration) and, if it did not compile, why
// (an Accepted condition, False), when that changes. A Stage that compiles
// carries no condition of the simulator's, as in KWOK. A failed write is
// retried with the next change of the Stages; the Warning Event says the
// same meanwhile.
func (w *stageWatcher) setAccepted(u *unstructured.Unstructured, compileErr error) {
	if w.status == nil {
		return
	}
	var status v1alpha1.StageStatus
	if raw, ok := u.Object["status"].(map[string]any); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status)
	}
	changed := status.ObservedGeneration != u.GetGeneration()
	status.ObservedGeneration = u.GetGeneration()
	if compileErr != nil {
		cond := metav1.Condition{Type: v1alpha1.StageConditionAccepted, Status: metav1.ConditionFalse,
			Reason: "StageInvalid", Message: compileErr.Error(), ObservedGeneration: u.GetGeneration()}
		old := apimeta.FindStatusCondition(status.Conditions, cond.Type)
		if old == nil || old.Status != cond.Status || old.Message != cond.Message || old.ObservedGeneration != cond.ObservedGeneration {
			apimeta.SetStatusCondition(&status.Conditions, cond)
			changed = true
		}
	} else if apimeta.RemoveStatusCondition(&status.Conditions, v1alpha1.StageConditionAccepted) {
		changed = true
	}
	if !changed {
		return
	}
	// The whole list: a merge patch replaces lists, and null removes it.
	var conditions any
	if len(status.Conditions) > 0 {
		conditions = status.Conditions
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"observedGeneration": status.ObservedGeneration, "conditions": conditions}})
	if err == nil {
		_, err = w.status.Patch(context.Background(), u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	}
	if err != nil {
		klog.V(2).InfoS("writing the Stage's status", "stage", u.GetName(), "err", err)
	}
}

func (w *stageWatcher) warnOnce(u *unstructured.Unstructured, err error) {
	if !w.invalid.first(u.GetName(), u.GetResourceVersion()) {
		return
	}
	klog.ErrorS(err, "stage left out", "stage", u.GetName())
	w.recorder.Event(u, corev1.EventTypeWarning, "StageInvalid", err.Error())
}

// newStageRetries spaces the retries of applying the stages: doubling
// from a second up to stageRetryCap. A Stage may name a kind whose CRD
// never comes; each retry looks again (discovery is reset), so a CRD that
// comes later is still picked up, within stageRetryCap.
func newStageRetries() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, stageRetryCap)
}

const stageRetryCap = 2 * time.Minute

// warnUnservedKinds tells each Stage naming a kind the API server does
// not serve (err, from apply), with a StageKindNotServed Warning Event on
// it, once per generation of the Stage.
func (w *stageWatcher) warnUnservedKinds(err error) {
	unserved := kindsNotServed(err)
	if len(unserved) == 0 {
		return
	}
	for _, obj := range w.informer.GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		s := &v1alpha1.Stage{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s) != nil {
			continue
		}
		group, kind := stage.RefGroupKind(s.Spec.ResourceRef)
		kindErr, ok := unserved[schema.GroupKind{Group: group, Kind: kind}]
		if !ok || !w.unserved.first(u.GetName(), string(u.GetUID())+"/"+strconv.FormatInt(u.GetGeneration(), 10)) {
			continue
		}
		w.recorder.Event(u, corev1.EventTypeWarning, "StageKindNotServed",
			kindErr.Error()+"; looked for again, less often each time, so a CRD for it applied later is picked up")
	}
}

// stageObject is the Stage object st was compiled from, or orElse for a
// built-in stage, which has none.
func stageObject(st *stage.Stage, orElse runtime.Object) runtime.Object {
	if st.UID == "" {
		return orElse
	}
	return &corev1.ObjectReference{
		APIVersion: v1alpha1.GroupVersion, Kind: v1alpha1.StageKind,
		Name: st.Name, UID: st.UID, ResourceVersion: st.Revision,
	}
}

// servesStages fails unless the cluster serves Stage objects (has the CRD).
func servesStages(disc discovery.DiscoveryInterface) error {
	_, err := disc.ServerResourcesForGroupVersion(v1alpha1.StagesResource.GroupVersion().String())
	return err
}

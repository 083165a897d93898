package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubesim/kubesim/internal/stage"
)

// kind is what the stage runner needs to know of one kind of object: how
// to read it, whether it is ours, and how to change it.
type kind interface {
	name() string
	// get returns the cached object for key, or false if it is gone.
	get(key string) (runtime.Object, bool)
	// managed reports whether this simulator acts for obj.
	managed(obj runtime.Object) bool
	// funcs are the template helpers for obj.
	funcs(obj runtime.Object) template.FuncMap
	// traits tell the stage engine how to patch the kind.
	traits() stage.Traits
	// patch sends a patch the stage engine planned.
	patch(ctx context.Context, obj runtime.Object, p stage.Patch) (runtime.Object, error)
	// remove deletes obj at once.
	remove(ctx context.Context, obj runtime.Object) error
	// keys lists the keys of every cached object, to re-evaluate them all
	// when the stages change.
	keys() []string
}

// runner moves the objects of one kind through their stages: it finds the
// stage an object is in, waits out the stage's delay and applies it.
type runner struct {
	kind      kind
	lifecycle atomic.Pointer[stage.Lifecycle]
	queue     workqueue.TypedRateLimitingInterface[string]
	recorder  record.EventRecorder
	writer    *objectWriter      // for apply steps; nil: they fail
	clock     clock.PassiveClock // when delays end; a fake one in tests
	faulted   reportedVersions   // Stages reported for running past their limits

	mu sync.Mutex
	// due is the stage each waiting object is scheduled for, and when.
	due map[string]scheduled
	// written is the resourceVersion of our last write of each object: a
	// cached copy older than that is stale and must not be acted on again.
	written map[string]uint64
	// deleted is the UID of each object we deleted that had no finalizers
	// left: it is gone, and a cached copy of it until the informer hears so
	// (the API server's write of a zero grace period comes first) must
	// not be deleted again.
	deleted map[string]types.UID
}

type scheduled struct {
	stage    string
	revision string
	at       time.Time
}

func newRunner(k kind, lifecycle *stage.Lifecycle, recorder record.EventRecorder) *runner {
	r := &runner{
		kind:     k,
		recorder: recorder,
		clock:    clock.RealClock{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: k.name()}),
		due:     map[string]scheduled{},
		written: map[string]uint64{},
		deleted: map[string]types.UID{},
	}
	r.lifecycle.Store(lifecycle)
	return r
}

// setLifecycle swaps in new stages and re-evaluates every object, so an
// applied, changed or deleted Stage takes effect at once.
func (r *runner) setLifecycle(l *stage.Lifecycle) {
	if old := r.lifecycle.Load(); old != nil && old.Signature() == l.Signature() {
		return // a Stage of another kind changed: nothing to re-evaluate here
	}
	r.lifecycle.Store(l)
	for _, key := range r.kind.keys() {
		r.queue.Add(key)
	}
}

// handler enqueues every change of the kind, and forgets deleted objects.
// onAdd and onDelete, if set, see each object first: in the informer's
// order, before the object's turn comes.
func (r *runner) handler(onAdd, onDelete func(obj any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if onAdd != nil {
				onAdd(obj)
			}
			r.enqueue(obj)
		},
		UpdateFunc: func(_, obj any) { r.enqueue(obj) },
		DeleteFunc: func(obj any) {
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			r.forget(key)
			if onDelete != nil {
				onDelete(obj)
			}
		},
	}
}

func (r *runner) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		r.queue.Add(key)
	}
}

func (r *runner) forget(key string) {
	r.mu.Lock()
	delete(r.due, key)
	delete(r.written, key)
	delete(r.deleted, key)
	r.mu.Unlock()
}

// run processes the queue with workers until ctx ends.
func (r *runner) run(ctx context.Context, workers int) {
	defer r.queue.ShutDown()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
}

func (r *runner) processNext(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	if err := r.syncRecovering(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "stage failed", "kind", r.kind.name(), "key", key)
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	return true
}

// syncRecovering is sync, with a panic (a bad Stage, a bug) made the
// object's error, reported with its stack: one object must never take
// the simulator down.
func (r *runner) syncRecovering(ctx context.Context, key string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			if obj, ok := r.kind.get(key); ok {
				r.warn(obj, obj, "StageFailed", err, "stack", string(debug.Stack()))
			} else {
				klog.ErrorS(err, "stage", "kind", r.kind.name(), "key", key, "stack", string(debug.Stack()))
			}
		}
	}()
	return r.sync(ctx, key)
}

// sync brings one object one step along its lifecycle, if one is due.
func (r *runner) sync(ctx context.Context, key string) error {
	obj, ok := r.kind.get(key)
	if !ok || !r.kind.managed(obj) {
		r.forget(key)
		return nil
	}
	if r.stale(key, obj) {
		return nil // our own write is on its way; its event brings us back
	}
	if r.gone(key, obj) {
		return nil // we deleted it; its deletion is on its way
	}
	if g, ok := r.kind.(gate); ok && g.held(obj) {
		r.mu.Lock()
		delete(r.due, key)
		r.mu.Unlock()
		return nil // what holds it brings it back when it changes
	}
	return r.step(ctx, key, obj, 0)
}

// gate is a kind whose objects may be held back from their stages for a
// while: pods whose claims are not reserved for them.
type gate interface {
	held(obj runtime.Object) bool
}

// maxChain bounds immediateNextStage chains, so a stage that matches its
// own result cannot loop forever.
const maxChain = 16

func (r *runner) step(ctx context.Context, key string, obj runtime.Object, depth int) error {
	m, err := toMap(obj)
	if err != nil {
		return err
	}
	st, faults := r.lifecycle.Load().Match(m)
	r.reportFaults(obj, faults...)
	if st == nil {
		r.forget(key)
		return nil
	}
	now := r.clock.Now()
	r.mu.Lock()
	s, ok := r.due[key]
	r.mu.Unlock()
	if !ok || s.stage != st.Name || s.revision != st.Revision {
		// Outside the lock: delay expressions may take a while.
		delay, fault := st.Delay(m, now)
		r.reportFaults(obj, fault)
		s = scheduled{stage: st.Name, revision: st.Revision, at: now.Add(delay)}
		r.mu.Lock()
		r.due[key] = s
		r.mu.Unlock()
	}
	if wait := s.at.Sub(now); wait > 0 {
		r.queue.AddAfter(key, wait)
		return nil
	}
	r.mu.Lock()
	delete(r.due, key)
	r.mu.Unlock()

	next, err := r.apply(ctx, obj, m, st)
	if err != nil {
		r.warn(obj, obj, "StageFailed", fmt.Errorf("stage %s: %w", st.Name, err))
		return fmt.Errorf("stage %s: %w", st.Name, err)
	}
	if next != nil && st.Spec.ImmediateNextStage && r.kind.managed(next) {
		if depth >= maxChain {
			r.queue.Add(key) // go on, but through the queue
			return nil
		}
		return r.step(ctx, key, next, depth+1)
	}
	return nil
}

// toMap is obj as JSON-like maps fit for jq, never sharing memory with
// the informer's cached copy.
func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return stage.Normalize(u.DeepCopy().Object).(map[string]any), nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return stage.Normalize(content).(map[string]any), nil
}

// apply makes the stage's change by carrying out its plan. It returns the
// object as the last write left it (nil if it is gone).
func (r *runner) apply(ctx context.Context, obj runtime.Object, m map[string]any, st *stage.Stage) (runtime.Object, error) {
	plan, err := st.Plan(m, r.kind.traits(), r.kind.funcs(obj))
	next, execErr := r.execute(ctx, obj, plan) // a plan that failed to render still has its event
	if err != nil {
		return nil, err
	}
	return next, execErr
}

// execute carries out a plan's steps on obj. NotFound ends the writes
// quietly (the object is gone), though a delete is still sent, NotFound
// being fine there too. Every write is noted for the staleness guard.
func (r *runner) execute(ctx context.Context, obj runtime.Object, plan []stage.Step) (runtime.Object, error) {
	result := obj
	for _, s := range plan {
		switch s.Op {
		case stage.EmitEvent:
			r.recorder.Event(obj, s.Event.Type, s.Event.Reason, s.Event.Message)
		case stage.SendPatch:
			if result == nil {
				continue
			}
			out, err := r.kind.patch(ctx, obj, s.Patch)
			if apierrors.IsNotFound(err) {
				result = nil
				continue
			}
			if err != nil {
				return nil, err
			}
			result = out
			r.noteWrite(obj, out)
		case stage.ApplyObject:
			if r.writer == nil {
				return nil, errors.New("apply steps are not available here")
			}
			if err := r.writer.apply(ctx, s.Apply); err != nil {
				return nil, err
			}
		case stage.DeleteObject:
			if err := r.kind.remove(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			r.noteDelete(obj, result)
			return nil, nil
		}
	}
	return result, nil
}

// stale reports whether obj is an older copy than our last write of it.
func (r *runner) stale(key string, obj runtime.Object) bool {
	r.mu.Lock()
	written, ok := r.written[key]
	r.mu.Unlock()
	return ok && resourceVersion(obj) < written
}

// gone reports whether obj is a cached copy of an object we deleted.
func (r *runner) gone(key string, obj runtime.Object) bool {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	r.mu.Lock()
	uid, ok := r.deleted[key]
	r.mu.Unlock()
	return ok && uid == accessor.GetUID() && len(accessor.GetFinalizers()) == 0
}

// noteDelete records obj as gone once deleted, if last (the object as our
// last write left it, nil if a patch found it gone) had no finalizers: one
// that had waits for them, and stays ours to act on.
func (r *runner) noteDelete(obj, last runtime.Object) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if last != nil {
		if l, err := meta.Accessor(last); err != nil || len(l.GetFinalizers()) != 0 {
			return
		}
	}
	r.mu.Lock()
	r.deleted[key] = accessor.GetUID()
	r.mu.Unlock()
}

func (r *runner) noteWrite(before, after runtime.Object) {
	key, err := cache.MetaNamespaceKeyFunc(before)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.written[key] = resourceVersion(after)
	r.mu.Unlock()
}

// resourceVersion reads an object's resourceVersion as the number etcd
// makes it; 0 if it is not one.
func resourceVersion(obj runtime.Object) uint64 {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(accessor.GetResourceVersion(), 10, 64)
	return v
}

// warn reports a stage failing on obj: a log line, with details if any,
// and a Warning Event on target (obj itself, or the Stage at fault).
func (r *runner) warn(obj, target runtime.Object, reason string, err error, details ...any) {
	klog.ErrorS(err, "stage", append([]any{"kind", r.kind.name(), "object", klog.KObj(objectMeta(obj))}, details...)...)
	r.recorder.Event(target, corev1.EventTypeWarning, reason, err.Error())
}

func objectMeta(obj runtime.Object) klog.KMetadata {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return accessor
}

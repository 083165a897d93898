package kubeletsim

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubesim/kubesim/internal/stage"
)

// fakePods is a kind of Pods kept in a map, standing for the informer's
// cache; a write is recorded and answered with the next resourceVersion,
// and (as with a real informer) reaches the cache only when the test says.
type fakePods struct {
	cache      map[string]*corev1.Pod
	patches    []stage.Patch
	removed    []string
	rv         int
	patchErr   error // what every patch fails with, if set
	patchPanic any   // what every patch panics with, if set
}

func (k *fakePods) name() string { return "Pod" }

func (k *fakePods) get(key string) (runtime.Object, bool) {
	pod, ok := k.cache[key]
	return pod, ok
}

func (k *fakePods) managed(runtime.Object) bool           { return true }
func (k *fakePods) funcs(runtime.Object) template.FuncMap { return nil }
func (k *fakePods) traits() stage.Traits                  { return stage.Traits{} }
func (k *fakePods) keys() []string                        { return slices.Sorted(maps.Keys(k.cache)) }

func (k *fakePods) patch(_ context.Context, obj runtime.Object, p stage.Patch) (runtime.Object, error) {
	k.patches = append(k.patches, p)
	if k.patchPanic != nil {
		panic(k.patchPanic)
	}
	if k.patchErr != nil {
		return nil, k.patchErr
	}
	k.rv++
	out := obj.(*corev1.Pod).DeepCopy()
	out.ResourceVersion = strconv.Itoa(k.rv)
	return out, nil
}

func (k *fakePods) remove(_ context.Context, obj runtime.Object) error {
	k.removed = append(k.removed, obj.(*corev1.Pod).Name)
	return nil
}

// delayQueue is the runner's queue, noting the waits it is asked for
// instead of timing them.
type delayQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	waits []time.Duration
}

func (q *delayQueue) AddAfter(_ string, d time.Duration) { q.waits = append(q.waits, d) }

const podKey = "default/p"

func pendingPod(resourceVersion string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1", ResourceVersion: resourceVersion},
		Spec:       corev1.PodSpec{NodeName: "n1"},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// userStage compiles a Pod Stage object named name, of spec (YAML
// indented by two spaces, less the resourceRef), as version revision.
func userStage(t *testing.T, name, spec, revision string) *stage.Stage {
	t.Helper()
	s, err := stage.Parse([]byte("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: " + name + "}\n" +
		"spec:\n  resourceRef: {apiGroup: v1, kind: Pod}\n" + spec))
	if err != nil {
		t.Fatal(err)
	}
	c, err := stage.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	c.Revision, c.UID = revision, types.UID("uid-"+name)
	return c
}

// readyStage is a stage named pod-ready for pending pods with the given
// delay and next, as revision.
func readyStage(t *testing.T, delay, next, revision string) *stage.Stage {
	t.Helper()
	return userStage(t, "pod-ready", "  delay: "+delay+"\n"+
		"  selector: {matchExpressions: [{key: .status.phase, operator: In, values: [Pending]}]}\n  next: "+next+"\n", revision)
}

// podStage is a lifecycle of readyStage alone.
func podStage(t *testing.T, delay, next, revision string) *stage.Lifecycle {
	t.Helper()
	return podLifecycle(readyStage(t, delay, next, revision))
}

func podLifecycle(stages ...*stage.Stage) *stage.Lifecycle {
	return stage.NewLifecycle("", "Pod", stages)
}

const runningNext = `{statusTemplate: "phase: Running"}`

// testRunner is a runner of fakePods on a fake clock, with what the tests
// look at.
type testRunner struct {
	*runner
	pods      *fakePods
	delays    *delayQueue
	fakeClock *clocktesting.FakeClock
	events    *record.FakeRecorder
}

func newTestRunner(t *testing.T, l *stage.Lifecycle, pod *corev1.Pod) testRunner {
	pods := &fakePods{cache: map[string]*corev1.Pod{podKey: pod}, rv: 9}
	events := record.NewFakeRecorder(10)
	r := newRunner(pods, l, events)
	queue := &delayQueue{TypedRateLimitingInterface: r.queue}
	t.Cleanup(queue.ShutDown)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r.queue, r.clock = queue, clock
	return testRunner{runner: r, pods: pods, delays: queue, fakeClock: clock, events: events}
}

// syncAfter moves the clock on by d, runs the runner's sync of the pod and
// checks how many patches it has sent by then.
func (r testRunner) syncAfter(t *testing.T, d time.Duration, wantPatches int, when string) {
	t.Helper()
	r.fakeClock.Step(d)
	if err := r.sync(context.Background(), podKey); err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if len(r.pods.patches) != wantPatches {
		t.Fatalf("%s: %d patches sent, want %d", when, len(r.pods.patches), wantPatches)
	}
}

// recorded drains the Events recorded so far.
func (r testRunner) recorded() []string {
	var out []string
	for {
		select {
		case e := <-r.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// wantWaits checks the delays the pod was re-queued after.
func (r testRunner) wantWaits(t *testing.T, want ...time.Duration) {
	t.Helper()
	if !slices.Equal(r.delays.waits, want) {
		t.Fatalf("re-queued after %v, want %v", r.delays.waits, want)
	}
}

// A cached copy older than the runner's own write is stale: acting on it
// would apply the stage twice. A newer one is acted on.
func TestRunnerActsOnlyOnCopiesAsNewAsItsWrite(t *testing.T) {
	r := newTestRunner(t, podStage(t, "{}", runningNext, "1"), pendingPod("5"))
	r.syncAfter(t, 0, 1, "first sync")
	if p := r.pods.patches[0]; p.Subresource != "status" || p.Type != types.StrategicMergePatchType {
		t.Errorf("patch %s to %q, want a strategic merge patch of status", p.Type, p.Subresource)
	}
	if got := r.written[podKey]; got != 10 {
		t.Fatalf("written %d, want our write's resourceVersion 10", got)
	}

	r.pods.cache[podKey] = pendingPod("9") // an event from before our write
	r.syncAfter(t, 0, 1, "sync of a copy older than our write")

	r.pods.cache[podKey] = pendingPod("11") // pending again, after our write
	r.syncAfter(t, 0, 2, "sync of a copy newer than our write")
}

// A stage with a delay is scheduled, not applied, and the pod re-queued
// for when it is due; once due, it is applied.
func TestRunnerWaitsOutAStageDelay(t *testing.T) {
	r := newTestRunner(t, podStage(t, "{durationMilliseconds: 1000}", runningNext, "1"), pendingPod("5"))
	r.syncAfter(t, 0, 0, "before the delay")
	r.syncAfter(t, 999*time.Millisecond, 0, "a millisecond before the delay ends")
	r.wantWaits(t, time.Second, time.Millisecond) // the same schedule, not a new delay
	r.syncAfter(t, time.Millisecond, 1, "once due")
	if len(r.due) != 0 {
		t.Errorf("still scheduled after applying: %v", r.due)
	}
}

// A stage changed while an object waits on it (a new revision) starts its
// delay afresh.
func TestRunnerReschedulesWhenTheStageChanges(t *testing.T) {
	r := newTestRunner(t, podStage(t, "{durationMilliseconds: 1000}", runningNext, "1"), pendingPod("5"))
	r.syncAfter(t, 0, 0, "before the delay")
	r.fakeClock.Step(500 * time.Millisecond)
	r.setLifecycle(podStage(t, "{durationMilliseconds: 1000}", runningNext, "2"))
	if r.delays.Len() != 1 {
		t.Errorf("the new stages queued %d objects, want the pod", r.delays.Len())
	}
	r.syncAfter(t, 500*time.Millisecond, 0, "when the changed stage's old schedule was due")
	r.wantWaits(t, time.Second, time.Second)
	r.syncAfter(t, time.Second, 1, "once the new schedule is due")
}

// A deleting stage records its event, clears the finalizers and deletes.
func TestRunnerCarriesOutADeletePlan(t *testing.T) {
	pod := pendingPod("5")
	pod.Finalizers = []string{"example.com/hold"}
	r := newTestRunner(t, podStage(t, "{}", `{event: {reason: Gone, message: bye}, finalizers: {empty: true}, delete: true}`, "1"), pod)
	r.syncAfter(t, 0, 1, "deleting")
	if got := r.recorded(); !slices.Equal(got, []string{"Normal Gone bye"}) {
		t.Errorf("events %q, want Normal Gone bye", got)
	}
	if !slices.Equal(r.pods.removed, []string{"p"}) {
		t.Errorf("removed %v, want p", r.pods.removed)
	}
}

// A deleted object is deleted once: the copy the informer still holds
// (the API server's write of a zero grace period reaches it before the
// deletion) is left alone. One whose finalizers the delete left in place
// is still there, and acted on again; so is a namesake.
func TestRunnerDeletesAnObjectOnce(t *testing.T) {
	const deleteNext = `{delete: true}`
	r := newTestRunner(t, podStage(t, "{}", deleteNext, "1"), pendingPod("5"))
	r.syncAfter(t, 0, 0, "deleting")
	r.pods.cache[podKey] = pendingPod("6") // the zero grace period's write
	r.syncAfter(t, 0, 0, "sync of the deleted pod's last copy")
	if !slices.Equal(r.pods.removed, []string{"p"}) {
		t.Fatalf("removed %v, want p once", r.pods.removed)
	}
	namesake := pendingPod("7")
	namesake.UID = "u2"
	r.pods.cache[podKey] = namesake
	r.syncAfter(t, 0, 0, "sync of a namesake")
	if len(r.pods.removed) != 2 {
		t.Fatalf("removed %v, want the namesake too", r.pods.removed)
	}

	held := pendingPod("5")
	held.Finalizers = []string{"example.com/hold"}
	r = newTestRunner(t, podStage(t, "{}", deleteNext, "1"), held)
	r.syncAfter(t, 0, 0, "deleting a pod its finalizer holds")
	r.syncAfter(t, 0, 0, "sync of the held pod")
	if len(r.pods.removed) != 2 {
		t.Fatalf("removed %v, want the held pod acted on again", r.pods.removed)
	}
}

// NotFound means the object is gone: the writes stop quietly, but a delete
// is still sent.
func TestExecuteStopsWritingWhenTheObjectIsGone(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")
	patch := stage.Step{Op: stage.SendPatch, Patch: stage.Patch{Type: types.MergePatchType, Data: []byte("{}")}}
	for _, tc := range []struct {
		plan        []stage.Step
		wantPatches int
		wantRemoved int
	}{
		{[]stage.Step{patch, patch}, 1, 0},
		{[]stage.Step{patch, {Op: stage.DeleteObject}}, 1, 1},
	} {
		r := newTestRunner(t, podStage(t, "{}", runningNext, "1"), pendingPod("5"))
		r.pods.patchErr = gone
		out, err := r.execute(context.Background(), pendingPod("5"), tc.plan)
		if out != nil || err != nil {
			t.Errorf("execute = %v, %v; want nil, nil", out, err)
		}
		if len(r.pods.patches) != tc.wantPatches || len(r.pods.removed) != tc.wantRemoved {
			t.Errorf("%d patches and %d deletes sent, want %d and %d",
				len(r.pods.patches), len(r.pods.removed), tc.wantPatches, tc.wantRemoved)
		}
	}
}

// A Stage whose selector runs forever is no match: the pod goes on by the
// other stages at once, nothing is retried, and the Stage gets one
// StageFailed Event however many objects it meets.
func TestRunnerReportsAnEndlessSelectorOnceOnItsStage(t *testing.T) {
	endless := userStage(t, "endless", "  selector: {matchExpressions: [{key: 'def f: f; f', operator: Exists}]}\n"+
		"  next: {statusTemplate: 'phase: Failed'}\n", "1")
	r := newTestRunner(t, podLifecycle(endless, readyStage(t, "{}", runningNext, "1")), pendingPod("5"))
	r.events.IncludeObject = true
	r.syncAfter(t, 0, 1, "first pod")
	if p := string(r.pods.patches[0].Data); p != `{"status":{"phase":"Running"}}` {
		t.Errorf("patched %s, want pod-ready's Running", p)
	}
	events := r.recorded()
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning StageFailed stage endless: spec.selector.matchExpressions[0].key:") ||
		!strings.HasSuffix(events[0], "involvedObject{kind=Stage,apiVersion=kwok.x-k8s.io/v1alpha1}") {
		t.Fatalf("events %q, want one StageFailed on Stage endless naming its key", events)
	}
	r.pods.cache[podKey] = pendingPod("11") // another pending pod the Stage meets
	r.syncAfter(t, 0, 2, "second pod")
	if events := r.recorded(); len(events) != 0 {
		t.Errorf("events %q, want the Stage reported once", events)
	}
	if r.delays.Len() != 0 || len(r.delays.waits) != 0 {
		t.Errorf("%d queued, re-queued after %v; want nothing retried", r.delays.Len(), r.delays.waits)
	}
}

// A render past the cap fails the stage: the pod is left as it is, with a
// StageFailed Event saying why.
func TestRunnerLeavesAnObjectAsItIsWhenItsRenderIsTooLarge(t *testing.T) {
	r := newTestRunner(t, podStage(t, "{}", `{statusTemplate: '{{ repeat 50000000 "x" }}'}`, "1"), pendingPod("5"))
	if err := r.sync(context.Background(), podKey); err == nil || !strings.Contains(err.Error(), "past the limit") {
		t.Errorf("sync: %v, want the render past the limit", err)
	}
	if len(r.pods.patches) != 0 {
		t.Errorf("%d patches sent, want the pod left as it is", len(r.pods.patches))
	}
	if events := r.recorded(); len(events) != 1 || !strings.HasPrefix(events[0], "Warning StageFailed stage pod-ready: spec.next.statusTemplate:") ||
		!strings.Contains(events[0], "past the limit") {
		t.Errorf("events %q, want one StageFailed on the pod naming the limit", events)
	}
}

// A panic while an object is synced (a bad Stage, a bug) is that object's
// error: a StageFailed Event, a retry later, and the worker goes on.
func TestRunnerRecoversAPanicPerObject(t *testing.T) {
	r := newTestRunner(t, podStage(t, "{}", runningNext, "1"), pendingPod("5"))
	r.pods.patchPanic = "boom"
	r.queue.Add(podKey)
	if !r.processNext(context.Background()) {
		t.Fatal("the worker stopped")
	}
	if events := r.recorded(); !slices.Equal(events, []string{"Warning StageFailed panic: boom"}) {
		t.Errorf("events %q, want one StageFailed naming the panic", events)
	}
	if n := r.queue.NumRequeues(podKey); n != 1 {
		t.Errorf("requeued %d times, want a retry later", n)
	}
}

// A pod stuck behind a bad Stage (one whose weight wins it every draw)
// moves on once the Stage is deleted: nothing of it lingers.
func TestDeletingABadStageFreesThePodsStuckBehindIt(t *testing.T) {
	for name, bad := range map[string]string{
		"a render past the cap": "  weight: 1\n" + `  next: {statusTemplate: '{{ repeat 50000000 "x" }}'}` + "\n",
		"a delay of a year":     "  weight: 1\n  delay: {durationMilliseconds: 31536000000}\n  next: {statusTemplate: 'phase: Failed'}\n",
	} {
		t.Run(name, func(t *testing.T) {
			ready := readyStage(t, "{}", runningNext, "1")
			r := newTestRunner(t, podLifecycle(userStage(t, "a-bad", bad, "1"), ready), pendingPod("5"))
			for range 3 {
				_ = r.sync(context.Background(), podKey) // fails or waits
				r.fakeClock.Step(time.Hour)
			}
			if len(r.pods.patches) != 0 {
				t.Fatalf("%d patches sent behind the bad Stage, want the pod stuck", len(r.pods.patches))
			}
			r.setLifecycle(podLifecycle(ready))
			if r.delays.Len() != 1 {
				t.Errorf("%d objects queued once the Stage is gone, want the pod", r.delays.Len())
			}
			r.syncAfter(t, 0, 1, "once the bad Stage is gone")
		})
	}
}

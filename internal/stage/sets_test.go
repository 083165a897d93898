package stage

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// matchName is the name of the stage o is in, "" if none.
func matchName(t *testing.T, l *Lifecycle, o map[string]any) string {
	t.Helper()
	s := match(t, l, o)
	if s == nil {
		return ""
	}
	return s.Name
}

// advance renders stage name on o and merges the status it yields the way
// a strategic merge patch would for the fields the stages write.
func advance(t *testing.T, l *Lifecycle, o map[string]any, want string) {
	t.Helper()
	s := match(t, l, o)
	if s == nil || s.Name != want {
		t.Fatalf("object in stage %v, want %s (status %v)", s, want, o["status"])
	}
	st := statusOf(t, s, o)
	old, _ := o["status"].(map[string]any)
	if old == nil {
		old = map[string]any{}
	}
	for k, v := range st {
		if k != "conditions" {
			old[k] = v
			continue
		}
		byType := map[string]int{}
		conds, _ := old["conditions"].([]any)
		for i, c := range conds {
			byType[c.(map[string]any)["type"].(string)] = i
		}
		for _, c := range v.([]any) {
			if i, ok := byType[c.(map[string]any)["type"].(string)]; ok {
				conds[i] = c
			} else {
				conds = append(conds, c)
			}
		}
		old["conditions"] = conds
	}
	o["status"] = Normalize(old)
}

func TestRealisticPodGoesThroughCreateInitAndReadyWithDelays(t *testing.T) {
	l := setLifecycle(t, "realistic", "Pod")
	o := obj(t, pendingPod)
	for _, name := range []string{"pod-create", "pod-init-containers", "pod-ready"} {
		s := match(t, l, o)
		if s != nil {
			if d := delay(t, s, o); d < time.Second || d > 3*time.Second {
				t.Errorf("%s delay %s, want 1-3s", s.Name, d)
			}
		}
		advance(t, l, o, name)
		if name != "pod-ready" && o["status"].(map[string]any)["phase"] != "Pending" {
			t.Fatalf("%s set phase %v", name, o["status"].(map[string]any)["phase"])
		}
	}
	st := o["status"].(map[string]any)
	if st["phase"] != "Running" || st["podIP"] != "10.0.0.7" || podCondition(st, "Ready") != "True" {
		t.Fatalf("after pod-ready: %v", st)
	}
	if got := matchName(t, l, o); got != "" {
		t.Errorf("running pod still matches %s", got)
	}
}

func TestRealisticDeleteNeverOutlastsGracePeriod(t *testing.T) {
	l := setLifecycle(t, "realistic", "Pod")
	o := obj(t, `
metadata: {name: d, uid: u4, deletionTimestamp: "2026-01-01T00:00:00Z", deletionGracePeriodSeconds: 1}
status: {phase: Running}
`)
	s := match(t, l, o)
	if s == nil || s.Name != "pod-delete" {
		t.Fatalf("matched %v", s)
	}
	for range 50 {
		if d := delay(t, s, o); d < 500*time.Millisecond || d > time.Second {
			t.Fatalf("delete delay %s with a 1s grace period", d)
		}
	}
}

// docs/node-failures.md lists chaos.kubesim.io/restart-delay beside the chaos
// labels: as a label it works too.
func TestCrashLoopRestartDelayFromLabel(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	o := obj(t, `
metadata:
  name: p
  namespace: default
  uid: u1
  labels: {chaos.kubesim.io/pod: crash-loop, chaos.kubesim.io/restart-delay: 2s}
spec: {nodeName: node-000000, containers: [{name: c, image: nginx}]}
status: {phase: Pending}
`)
	advance(t, l, o, "pod-ready")
	advance(t, l, o, "pod-crash-loop")
	if d := delay(t, match(t, l, o), o); d != 2*time.Second {
		t.Errorf("restart delay %s, want the label's 2s", d)
	}
}

func TestCrashLoopRestartsWithGrowingCountAndStopsWithoutLabel(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	o := obj(t, `
metadata:
  name: p
  namespace: default
  uid: u1
  labels: {chaos.kubesim.io/pod: crash-loop}
  annotations: {chaos.kubesim.io/restart-delay: 1s}
spec: {nodeName: node-000000, containers: [{name: c, image: nginx}]}
status: {phase: Pending}
`)
	advance(t, l, o, "pod-ready")
	for round := 1; round <= 2; round++ {
		advance(t, l, o, "pod-crash-loop")
		cs := o["status"].(map[string]any)["containerStatuses"].([]any)[0].(map[string]any)
		if fmt.Sprint(cs["restartCount"]) != fmt.Sprint(round) || cs["state"].(map[string]any)["waiting"].(map[string]any)["reason"] != "CrashLoopBackOff" {
			t.Fatalf("round %d: container %v", round, cs)
		}
		if podCondition(o["status"].(map[string]any), "Ready") != "False" {
			t.Fatalf("crashed pod Ready")
		}
		s := match(t, l, o)
		if d := delay(t, s, o); d != time.Second {
			t.Errorf("restart delay %s, want the annotation's 1s", d)
		}
		advance(t, l, o, "pod-container-restart")
		if podCondition(o["status"].(map[string]any), "Ready") != "True" {
			t.Fatalf("restarted pod not Ready")
		}
		cs = o["status"].(map[string]any)["containerStatuses"].([]any)[0].(map[string]any)
		last, _ := cs["lastState"].(map[string]any)["terminated"].(map[string]any)
		if last["exitCode"] == nil || last["finishedAt"] == nil {
			t.Fatalf("restart lost the last termination: %v", cs)
		}
	}
	// Without the annotation the back-off is the kubelet's: 10s doubling.
	delete(o["metadata"].(map[string]any), "annotations")
	advance(t, l, o, "pod-crash-loop")
	s := match(t, l, o)
	if d := delay(t, s, o); d != 40*time.Second {
		t.Errorf("back-off after 3 restarts %s, want 40s", d)
	}
	delete(o["metadata"].(map[string]any), "labels")
	advance(t, l, o, "pod-container-restart")
	if got := matchName(t, l, o); got != "" {
		t.Errorf("unlabelled running pod matches %s", got)
	}
}

func TestChaosNodeNotReadyHoldsUntilUnlabelled(t *testing.T) {
	l := builtinLifecycle(t, "Node")
	n := obj(t, `
metadata: {name: n, labels: {chaos.kubesim.io/node: not-ready}}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
`)
	advance(t, l, n, "node-not-ready")
	if podCondition(n["status"].(map[string]any), "Ready") != "False" {
		t.Fatal("node-not-ready left Ready")
	}
	if got := matchName(t, l, n); got != "" {
		t.Fatalf("not-ready chaos node matches %s", got)
	}
	delete(n["metadata"].(map[string]any), "labels")
	advance(t, l, n, "node-initialize")
}

func TestPodFailedChaos(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	o := obj(t, `
metadata: {name: p, namespace: default, uid: u1, labels: {chaos.kubesim.io/pod: failed}}
spec: {nodeName: node-000000, containers: [{name: c, image: nginx}]}
status: {phase: Pending}
`)
	advance(t, l, o, "pod-ready")
	advance(t, l, o, "pod-failed")
	if o["status"].(map[string]any)["phase"] != "Failed" {
		t.Fatalf("status %v", o["status"])
	}
}

// chaos.kubesim.io/delay works as a label, as the chaos labels beside it,
// and as an annotation, which wins.
func TestChaosDelayFromLabelOrAnnotation(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	for _, c := range []struct {
		meta string
		want time.Duration
	}{
		{`labels: {chaos.kubesim.io/pod: failed, chaos.kubesim.io/delay: 3s}`, 3 * time.Second},
		{`labels: {chaos.kubesim.io/pod: failed, chaos.kubesim.io/delay: 3s}, annotations: {chaos.kubesim.io/delay: 4s}`, 4 * time.Second},
	} {
		o := obj(t, `
metadata: {name: p, namespace: default, uid: u1, `+c.meta+`}
spec: {nodeName: node-000000, containers: [{name: c, image: nginx}]}
status: {phase: Pending}
`)
		advance(t, l, o, "pod-ready")
		if d := delay(t, match(t, l, o), o); d != c.want {
			t.Errorf("%s: delay %s, want %s", c.meta, d, c.want)
		}
	}
}

func TestUserStageReplacesBuiltinOfTheSameName(t *testing.T) {
	builtin, err := Builtin("fast")
	if err != nil {
		t.Fatal(err)
	}
	user, err := Parse([]byte(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector: {matchExpressions: [{key: .status.phase, operator: In, values: [Pending]}]}
  delay: {durationMilliseconds: 7000}
  next: {statusTemplate: "phase: Running"}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(user)
	if err != nil {
		t.Fatal(err)
	}
	merged := Merge(builtin, []*Stage{c})
	if len(merged) != len(builtin) {
		t.Fatalf("%d stages after merge, want %d", len(merged), len(builtin))
	}
	s := match(t, NewLifecycle("", "Pod", merged), obj(t, pendingPod))
	if s != c {
		t.Fatalf("pending pod matched %v, want the user's pod-ready", s)
	}
	if _, err := Builtin("slow"); err == nil || !strings.Contains(err.Error(), "fast") {
		t.Errorf("unknown set: %v", err)
	}
}

// A deleted pod that a finalizer holds (a Job's job-tracking one) first
// ends, phase Failed with its containers stopped, as a kubelet ends it —
// else its Job, waiting for a terminal phase, never replaces it — and
// only then goes; a pod without finalizers goes at once, as before.
func TestDeletedPodHeldByAFinalizerEndsBeforeItGoes(t *testing.T) {
	for _, set := range []string{"fast", "realistic"} {
		l := setLifecycle(t, set, "Pod")
		held := obj(t, `
metadata: {name: j, uid: u5, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [batch.kubernetes.io/job-tracking]}
spec: {containers: [{name: c, image: busybox}]}
status: {phase: Running}
`)
		s := match(t, l, held)
		if s == nil || s.Name != "pod-terminate" {
			t.Fatalf("%s: a held pod matched %v, want pod-terminate", set, s)
		}
		st := statusOf(t, s, held)
		cs, _ := st["containerStatuses"].([]any)
		if st["phase"] != "Failed" || len(cs) != 1 || cs[0].(map[string]any)["state"].(map[string]any)["terminated"] == nil {
			t.Errorf("%s: pod-terminate wrote %v", set, st)
		}
		held["status"].(map[string]any)["phase"] = "Failed"
		if s := match(t, l, held); s == nil || s.Name != "pod-delete" {
			t.Errorf("%s: an ended held pod matched %v, want pod-delete", set, s)
		}
		free := obj(t, `
metadata: {name: f, uid: u6, deletionTimestamp: "2026-01-01T00:00:00Z"}
status: {phase: Running}
`)
		if s := match(t, l, free); s == nil || s.Name != "pod-delete" {
			t.Errorf("%s: a pod without finalizers matched %v, want pod-delete", set, s)
		}
	}
}

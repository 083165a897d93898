package stage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

func obj(t *testing.T, y string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return Normalize(m).(map[string]any)
}

func builtinLifecycle(t *testing.T, kind string) *Lifecycle {
	t.Helper()
	return setLifecycle(t, "fast", kind)
}

func setLifecycle(t *testing.T, set, kind string) *Lifecycle {
	t.Helper()
	stages, err := Builtin(set)
	if err != nil {
		t.Fatal(err)
	}
	return NewLifecycle("", kind, stages)
}

// match is the stage o is in, failing t on faults.
func match(t *testing.T, l *Lifecycle, o map[string]any) *Stage {
	t.Helper()
	s, faults := l.Match(o)
	if len(faults) != 0 {
		t.Fatalf("faults: %v", faults)
	}
	return s
}

// delay is s's delay for o from now, failing t on a fault.
func delay(t *testing.T, s *Stage, o map[string]any) time.Duration {
	t.Helper()
	d, fault := s.Delay(o, time.Now())
	if fault != nil {
		t.Fatal(fault)
	}
	return d
}

var testFuncs = template.FuncMap{
	"NodeIP":   func() string { return "10.64.0.1" },
	"NodeName": func() string { return "node-000000" },
	"NodePort": func() int { return 10250 },
	"NodeConditions": func() []map[string]any {
		return []map[string]any{{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok"}}
	},
	"NodeIPWith":     func(string) string { return "10.64.0.1" },
	"PodIPWith":      func(string, bool, string, string, string) (string, error) { return "10.0.0.7", nil },
	"Version":        func() string { return "kubesim-test" },
	"KubeletVersion": func() string { return "v1.36.0-test" },
}

// patchesOf plans s on o and keeps the patches.
func patchesOf(s *Stage, o map[string]any, funcs template.FuncMap) ([]Patch, error) {
	plan, err := s.Plan(o, Traits{}, funcs)
	var out []Patch
	for _, st := range plan {
		if st.Op == SendPatch {
			out = append(out, st.Patch)
		}
	}
	return out, err
}

func statusOf(t *testing.T, s *Stage, o map[string]any) map[string]any {
	t.Helper()
	patches, err := patchesOf(s, o, testFuncs)
	if err != nil {
		t.Fatalf("render %s: %v", s.Name, err)
	}
	if len(patches) != 1 || patches[0].Subresource != "status" {
		t.Fatalf("render %s: patches %+v", s.Name, patches)
	}
	var p map[string]map[string]any
	if err := json.Unmarshal(patches[0].Data, &p); err != nil {
		t.Fatalf("%s rendered invalid JSON %s: %v", s.Name, patches[0].Data, err)
	}
	return p["status"]
}

func podCondition(status map[string]any, typ string) string {
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == typ {
			return m["status"].(string)
		}
	}
	return ""
}

const pendingPod = `
metadata: {name: p, namespace: default, uid: u1}
spec:
  nodeName: node-000000
  initContainers: [{name: init, image: busybox}]
  containers: [{name: c, image: nginx}]
status: {phase: Pending}
`

func TestPendingPodBecomesReadyWithAnIP(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	o := obj(t, pendingPod)
	s := match(t, l, o)
	if s == nil || s.Name != "pod-ready" {
		t.Fatalf("pending pod matched %v, want pod-ready", s)
	}
	st := statusOf(t, s, o)
	if st["phase"] != "Running" || st["podIP"] != "10.0.0.7" || st["hostIP"] != "10.64.0.1" {
		t.Errorf("status %v", st)
	}
	if podCondition(st, "Ready") != "True" || podCondition(st, "ContainersReady") != "True" {
		t.Errorf("conditions %v", st["conditions"])
	}
	init := st["initContainerStatuses"].([]any)[0].(map[string]any)
	if init["state"].(map[string]any)["terminated"].(map[string]any)["reason"] != "Completed" {
		t.Errorf("init container not Completed: %v", init)
	}
}

func TestReadinessGatesHoldReadyUntilTrue(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	o := obj(t, `
metadata: {name: p, namespace: default, uid: u1}
spec: {nodeName: node-000000, containers: [{name: c, image: nginx}]}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "True"}]}
`)
	o["spec"].(map[string]any)["readinessGates"] = []any{map[string]any{"conditionType": "example.com/gate"}}
	s := match(t, l, o)
	st := statusOf(t, s, o)
	if podCondition(st, "Ready") != "False" {
		t.Fatalf("Ready with an unmet gate: %v", st["conditions"])
	}
	// Running, gate still False: nothing to do.
	running := obj(t, `
metadata: {name: p, uid: u1}
spec:
  readinessGates: [{conditionType: example.com/gate}]
  containers: [{name: c, image: nginx}]
status:
  phase: Running
  conditions:
  - {type: Ready, status: "False"}
  - {type: example.com/gate, status: "False"}
  - {type: ContainersReady, status: "True"}
`)
	if s := match(t, l, running); s != nil {
		t.Fatalf("running pod with unmet gate matched %v", s.Name)
	}
	running["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["status"] = "True"
	s = match(t, l, running)
	if s == nil || s.Name != "pod-ready-sync" {
		t.Fatalf("gate met: matched %v, want pod-ready-sync", s)
	}
	if podCondition(statusOf(t, s, running), "Ready") != "True" {
		t.Error("gate stage does not set Ready")
	}
}

// The node-lifecycle controller marks a lost node's pods NotReady; back in
// touch, the simulated kubelet sets Ready again, unless its containers are
// not ready (a crash loop).
func TestReadyRestoredAfterNodeOutage(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	marked := obj(t, `
metadata: {name: p, uid: u1}
spec: {containers: [{name: c, image: nginx}]}
status:
  phase: Running
  conditions:
  - {type: ContainersReady, status: "True"}
  - {type: Ready, status: "False"}
`)
	s := match(t, l, marked)
	if s == nil || s.Name != "pod-ready-sync" {
		t.Fatalf("pod marked NotReady matched %v, want pod-ready-sync", s)
	}
	if podCondition(statusOf(t, s, marked), "Ready") != "True" {
		t.Error("Ready not restored")
	}
	marked["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["status"] = "False"
	if s := match(t, l, marked); s != nil {
		t.Errorf("pod with containers not ready matched %s", s.Name)
	}
}

func TestJobPodCompletesAndDeletedPodGoes(t *testing.T) {
	l := builtinLifecycle(t, "Pod")
	job := obj(t, `
metadata: {name: j, uid: u2, ownerReferences: [{kind: Job, name: x}]}
spec: {containers: [{name: c, image: busybox}]}
status: {phase: Running, startTime: "2026-01-01T00:00:00Z"}
`)
	s := match(t, l, job)
	if s == nil || s.Name != "pod-complete" {
		t.Fatalf("running Job pod matched %v, want pod-complete", s)
	}
	st := statusOf(t, s, job)
	term := st["containerStatuses"].([]any)[0].(map[string]any)["state"].(map[string]any)["terminated"].(map[string]any)
	if st["phase"] != "Succeeded" || term["exitCode"] != float64(0) {
		t.Errorf("status %v", st)
	}
	rs := obj(t, `
metadata: {name: r, uid: u3, ownerReferences: [{kind: ReplicaSet, name: x}]}
status: {phase: Running}
`)
	if s := match(t, l, rs); s != nil {
		t.Errorf("running ReplicaSet pod matched %s", s.Name)
	}
	deleting := obj(t, `
metadata: {name: d, uid: u4, deletionTimestamp: "2026-01-01T00:00:00Z"}
status: {phase: Running}
`)
	if s := match(t, l, deleting); s == nil || s.Name != "pod-delete" || !s.Spec.Next.Delete {
		t.Errorf("deleting pod matched %v, want pod-delete", s)
	}
}

func TestNewNodeInitializesWithDefaultsOrItsOwnCapacity(t *testing.T) {
	l := builtinLifecycle(t, "Node")
	n := obj(t, `metadata: {name: node-000000, creationTimestamp: "2026-01-01T00:00:00Z"}`)
	s := match(t, l, n)
	if s == nil || s.Name != "node-initialize" {
		t.Fatalf("new node matched %v", s)
	}
	st := statusOf(t, s, n)
	if st["capacity"].(map[string]any)["pods"] != "110" || st["allocatable"].(map[string]any)["cpu"] != "32" {
		t.Errorf("default capacity: %v / %v", st["capacity"], st["allocatable"])
	}
	if st["nodeInfo"].(map[string]any)["kubeletVersion"] != "v1.36.0-test" || st["nodeInfo"].(map[string]any)["kernelVersion"] != "kubesim-test" || podCondition(st, "Ready") != "True" {
		t.Errorf("status %v", st)
	}
	custom := obj(t, `
metadata: {name: big}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "20000"}}
`)
	st = statusOf(t, s, custom)
	if st["capacity"].(map[string]any)["pods"] != "20000" || st["allocatable"].(map[string]any)["pods"] != "20000" {
		t.Errorf("template capacity not kept: %v / %v", st["capacity"], st["allocatable"])
	}
	ready := obj(t, `
metadata: {name: n}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
`)
	s = match(t, l, ready)
	if s == nil || s.Name != "node-heartbeat" {
		t.Fatalf("ready node matched %v, want node-heartbeat", s)
	}
	if d := delay(t, s, ready); d < 4*time.Minute || d > 5*time.Minute {
		t.Errorf("heartbeat delay %s, want 4-5m", d)
	}
}

func TestDelayFromExpressionAndJitter(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	s, err := Compile(&v1alpha1.Stage{Spec: v1alpha1.StageSpec{
		ResourceRef: v1alpha1.StageResourceRef{Kind: "Pod"},
		Delay: &v1alpha1.StageDelay{
			DurationMilliseconds:       ms(1000),
			DurationFrom:               &v1alpha1.ExpressionFromSource{ExpressionFrom: `.metadata.annotations["delay"]`},
			JitterDurationMilliseconds: ms(3000),
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	plain := obj(t, `metadata: {name: a}`)
	for range 50 {
		if d := delay(t, s, plain); d < time.Second || d >= 3*time.Second {
			t.Fatalf("delay %s outside [1s,3s)", d)
		}
	}
	annotated := obj(t, `metadata: {name: a, annotations: {delay: "2500ms"}}`)
	for range 50 {
		if d := delay(t, s, annotated); d < 2500*time.Millisecond || d >= 3*time.Second {
			t.Fatalf("annotated delay %s outside [2.5s,3s)", d)
		}
	}
}

func TestCompileNamesTheBadField(t *testing.T) {
	for _, tc := range []struct {
		spec v1alpha1.StageSpec
		want string
	}{
		{v1alpha1.StageSpec{}, "spec.resourceRef.kind"},
		{v1alpha1.StageSpec{ResourceRef: v1alpha1.StageResourceRef{Kind: "Pod"},
			Selector: &v1alpha1.StageSelector{MatchExpressions: []v1alpha1.MatchExpression{{Key: ".a[", Operator: "Exists"}}}},
			"spec.selector.matchExpressions[0].key"},
		{v1alpha1.StageSpec{ResourceRef: v1alpha1.StageResourceRef{Kind: "Pod"},
			Selector: &v1alpha1.StageSelector{MatchExpressions: []v1alpha1.MatchExpression{{Key: ".a", Operator: "Near"}}}},
			"spec.selector.matchExpressions[0].operator"},
		{v1alpha1.StageSpec{ResourceRef: v1alpha1.StageResourceRef{Kind: "Pod"},
			Next: v1alpha1.StageNext{StatusTemplate: "{{ .a "}}, "spec.next.statusTemplate"},
	} {
		_, err := Compile(&v1alpha1.Stage{Spec: tc.spec})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want error naming %s", tc.spec, err, tc.want)
		}
	}
}

// kwokStages are the KWOK project's published stages, parsed.
func kwokStages(t *testing.T) []*v1alpha1.Stage {
	t.Helper()
	files, _ := filepath.Glob("../../test/e2e/testdata/kwok-stages/*/*/*.yaml")
	if len(files) < 15 {
		t.Fatalf("found %d of KWOK's 15 published stages in test/e2e/testdata/kwok-stages", len(files))
	}
	var out []*v1alpha1.Stage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

// The KWOK project's published stages must parse and compile.
func TestKWOKStagesCompile(t *testing.T) {
	for _, s := range kwokStages(t) {
		if _, err := Compile(s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// Renders reuse template clones: each must see only its own helpers, even
// when many run at once, and a render without a helper must not find the
// one an earlier render bound.
func TestRendersKeepTheirOwnHelpers(t *testing.T) {
	s, err := Compile(&v1alpha1.Stage{
		ObjectMeta: metav1.ObjectMeta{Name: "named"},
		Spec: v1alpha1.StageSpec{
			ResourceRef: v1alpha1.StageResourceRef{APIGroup: "v1", Kind: "Node"},
			Next:        v1alpha1.StageNext{StatusTemplate: "name: {{ NodeName }}"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			want := fmt.Sprintf("node-%d", i)
			patches, err := patchesOf(s, map[string]any{}, template.FuncMap{"NodeName": func() string { return want }})
			if err != nil {
				t.Error(err)
				return
			}
			if got := string(patches[0].Data); got != `{"status":{"name":"`+want+`"}}` {
				t.Errorf("render for %s gave %s", want, got)
			}
		})
	}
	wg.Wait()
	if _, err := patchesOf(s, map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), "NodeName is not available") {
		t.Fatalf("render without NodeName: got %v, want 'NodeName is not available'", err)
	}
}

// BenchmarkPodReady is the simulator's hottest path: matching a new pod
// against the built-in stages and planning pod-ready for it.
func BenchmarkPodReady(b *testing.B) {
	stages, err := Builtin("fast")
	if err != nil {
		b.Fatal(err)
	}
	lc := NewLifecycle("", "Pod", stages)
	var m map[string]any
	if err := yaml.Unmarshal([]byte(pendingPod), &m); err != nil {
		b.Fatal(err)
	}
	pod := Normalize(m).(map[string]any)
	for b.Loop() {
		st, faults := lc.Match(pod)
		if st == nil || faults != nil {
			b.Fatalf("a pending pod matched %v with faults %v", st, faults)
		}
		if _, err := st.Plan(pod, Traits{}, testFuncs); err != nil {
			b.Fatal(err)
		}
	}
}

package scenario

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// fleetRun is a run 100 s old whose fleet saw, in cluster seconds: nodes
// a, b, c of NodePool default ($0.50 an hour) added at 10, 20 and 30; a
// and b tainted by Karpenter at 60 and 70 and deleted at 80 and 90, a
// for Underutilized; pod p Pending from 10, Running at 40; pod q Pending
// from 10, deleted at 20. Steps "burst" began at 0, "shrink" at 50 and
// "last" at 85.
func fleetRun(t *testing.T) *view {
	t.Helper()
	began := time.Now().Add(-100 * time.Second)
	f := newFleet()
	var at time.Duration
	f.now = func() time.Time { return began.Add(at) }
	kwok := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c-2x-amd64-linux", "eks-node-viewer/instance-price": "0.5"}}}
	}
	tainted := func(n *corev1.Node) *corev1.Node {
		n = n.DeepCopy()
		n.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}}
		return n
	}
	pod := func(uid string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)}, Status: corev1.PodStatus{Phase: phase}}
	}
	events := []struct {
		at time.Duration
		do func()
	}{
		{10 * time.Second, func() {
			f.node(kwok("a"), false)
			f.pod(pod("p", corev1.PodPending), false)
			f.pod(pod("q", corev1.PodPending), false)
		}},
		{20 * time.Second, func() { f.node(kwok("b"), false); f.pod(pod("q", corev1.PodPending), true) }},
		{30 * time.Second, func() { f.node(kwok("c"), false) }},
		{40 * time.Second, func() { f.pod(pod("p", corev1.PodRunning), false) }},
		{59 * time.Second, func() { f.reasons["a"] = "Underutilized" }},
		{60 * time.Second, func() { f.node(tainted(kwok("a")), false) }},
		{70 * time.Second, func() { f.node(tainted(kwok("b")), false) }},
		{80 * time.Second, func() { f.node(tainted(kwok("a")), true) }},
		{90 * time.Second, func() { f.node(tainted(kwok("b")), true) }},
	}
	for _, e := range events {
		at = e.at
		e.do()
	}
	r := &runner{began: began, result: &result.Scenario{Steps: []*result.Step{
		{Name: "burst", Start: 0}, {Name: "shrink", Start: 50 * time.Second}, {Name: "last [n=1]", Start: 85 * time.Second}}}}
	return &view{t: &target{fleet: f, run: r, spec: &v1alpha1.ScenarioCluster{}}}
}

func TestFleetBoundsAndCost(t *testing.T) {
	v := fleetRun(t)
	bound := func(sel string, max int, since string) *v1alpha1.NodeBound {
		return &v1alpha1.NodeBound{Selector: sel, Max: ptr.To(max), Since: since}
	}
	for _, tc := range []struct {
		name   string
		a      v1alpha1.Assertion
		passed bool
		actual string // its start
	}{
		{"three at once at 30s", v1alpha1.Assertion{MaxNodes: bound("karpenter.sh/nodepool=default", 2, "")}, false, "3 at once at 30.0s: a, b, c"},
		{"at most three", v1alpha1.Assertion{MaxNodes: bound("", 3, "")}, true, "at most 3, first at 30.0s"},
		{"a selector that picks none", v1alpha1.Assertion{MaxNodes: bound("karpenter.sh/nodepool=other", 0, "")}, true, "none at any time"},
		{"since shrink: a and b", v1alpha1.Assertion{MaxNodes: bound("", 2, "shrink")}, false, "3 at once at 50.0s"},
		{"two disrupting at 70s", v1alpha1.Assertion{MaxDisrupting: bound("", 1, "")}, false, "2 at once at 70.0s: a, b"},
		{"one disrupting after 85s (a foreach's step)", v1alpha1.Assertion{MaxDisrupting: bound("", 1, "last")}, true, "at most 1, first at 85.0s"},
		{"cost", v1alpha1.Assertion{Cost: &v1alpha1.CostAssertion{Max: "0.03"}}, true, "$0.0292, 0.058 node-hours of 3 nodes"},
		{"cost too high", v1alpha1.Assertion{Cost: &v1alpha1.CostAssertion{Max: "0.02"}}, false, "$0.0292"},
		{"node-hours", v1alpha1.Assertion{Cost: &v1alpha1.CostAssertion{MaxNodeHours: "0.05"}}, false, "$0.0292, 0.058 node-hours"},
		{"cost since shrink", v1alpha1.Assertion{Cost: &v1alpha1.CostAssertion{Max: "1", Since: "shrink"}}, true, "$0.0167, 0.033 node-hours of 3 nodes"},
	} {
		passed, _, actual := v.evaluate(&tc.a)
		if passed != tc.passed || !strings.HasPrefix(actual, tc.actual) {
			t.Errorf("%s: passed %v actual %q; want %v %q…", tc.name, passed, actual, tc.passed, tc.actual)
		}
	}

	f := v.t.run.fleetOf(v.t)
	if f == nil || !f.Elastic || len(f.Nodes) != 3 || f.Nodes[0].Labels != nil {
		t.Fatalf("fleet for the report: %+v", f)
	}
	if a := f.Nodes[0]; a.Reason != "Underutilized" || a.Gone == nil || *a.Gone != 80*time.Second || len(a.Disrupting) != 1 || *a.Disrupting[0].To != 80*time.Second {
		t.Errorf("node a: %+v", a)
	}
	if len(f.Startup) != 1 || f.Startup[0] != 30*time.Second {
		t.Errorf("Pending→Running: %v, want [30s] (q never ran)", f.Startup)
	}
	want := []result.Count{{At: 10 * time.Second, N: 2}, {At: 20 * time.Second, N: 1}, {At: 40 * time.Second, N: 0}}
	if len(f.Pending) != len(want) {
		t.Fatalf("Pending: %v, want %v", f.Pending, want)
	}
	for i := range want {
		if f.Pending[i] != want[i] {
			t.Errorf("Pending: %v, want %v", f.Pending, want)
		}
	}
	text := f.Text()
	for _, w := range []string{"NodePool default: peak 3 nodes, 3 launched, 2 disrupted (Underutilized 1, other 1), 0.06 node-hours, $0.03", "Pending→Running of 1 pods: median 30.0s"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
}

// A burst of Pending pods folds into one sample of its most, and where
// it ended is kept: the chart neither draws every pod nor holds the peak.
func TestPendingBurstFolds(t *testing.T) {
	f := newFleet()
	began := time.Now()
	at := time.Duration(0)
	f.now = func() time.Time { return began.Add(at) }
	for i := range 100 {
		at = time.Duration(i) * time.Millisecond
		f.pod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(rune('a' + i))}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, false)
	}
	for i := range 100 {
		at = 100*time.Millisecond + time.Duration(i)*time.Millisecond
		f.pod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(rune('a' + i))}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, false)
	}
	got := f.snapshot(began, 0, time.Second).Pending
	want := []result.Count{{At: 0, N: 100}, {At: 199 * time.Millisecond, N: 0}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Pending %v, want %v", got, want)
	}
	if len(f.startup) != 100 {
		t.Errorf("%d pods timed, want 100", len(f.startup))
	}
}

func TestFleetAssertionsValidate(t *testing.T) {
	for _, tc := range []struct {
		yaml, want string
	}{
		{"- assert: [{maxNodes: {selector: a=b}}]", `steps[0].assert: [0]: maxNodes.max: required, 0 or more`},
		{"- assert: [{maxDisrupting: {max: 1, selector: 'a in ('}}]", `steps[0].assert: [0]: maxDisrupting.selector:`},
		{"- assert: [{cost: {selector: a}}]", `steps[0].assert: [0]: cost: give max (dollars, such as "12.5") or maxNodeHours`},
		{"- assert: [{cost: {max: twelve}}]", `steps[0].assert: [0]: cost.max: "twelve" is not a number 0 or more`},
		{"- wait: {maxNodes: {max: 3}}", `steps[0].wait: maxNodes: only an assert can check them`},
		{"- {name: burst, sleep: 1s}\n- assert: [{maxNodes: {max: 3, since: brust}}]", `:5: steps[1].assert[0].maxNodes.since: no step named "brust" before this one`},
		{"- assert: [{nodes: {selector: a=b, nodes: [x], count: 1}}]", `nodes: give selector or nodes, not both`},
	} {
		_, err := load(t, head+"steps:\n"+tc.yaml+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
	for _, ok := range []string{
		"- {name: burst, sleep: 1s}\n- assert: [{maxNodes: {max: 3, since: burst}}, {maxDisrupting: {max: 0}}, {cost: {max: 12.5, maxNodeHours: '3'}}, {nodes: {selector: a=b, count: 1}}]",
	} {
		if _, err := load(t, head+"steps:\n"+ok+"\n", nil); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// autoscaler: {karpenter: {}} in a scenario's cluster reaches the Cluster
// the run makes, as --autoscaler karpenter does on create.
func TestScenarioClusterAutoscaler(t *testing.T) {
	f, err := load(t, head+"cluster: {autoscaler: {karpenter: {}}, timeScale: 10}\nsteps:\n- sleep: 1s\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := ClusterConfig(f.Scenario.Cluster, "x"); c.Autoscaler.Karpenter == nil || c.TimeScale != 10 {
		t.Errorf("ClusterConfig: autoscaler %+v, timeScale %d; want Karpenter at 10×", c.Autoscaler, c.TimeScale)
	}
}

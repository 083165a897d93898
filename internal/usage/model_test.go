package usage

import (
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

func testPod(ns, name string, annotations map[string]string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations,
			CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Minute))},
		Spec: corev1.PodSpec{NodeName: "node-0", Containers: containers},
	}
}

func container(name, cpu, memory string) corev1.Container {
	c := corev1.Container{Name: name}
	if cpu != "" || memory != "" {
		c.Resources.Requests = corev1.ResourceList{}
	}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return c
}

func newModel(t *testing.T) *Model {
	t.Helper()
	m, err := NewModel(DefaultFactor)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func usageOf(t *testing.T, m *Model, pod *corev1.Pod, c int, res string) float64 {
	t.Helper()
	// Through kept maps: expressions see the fields they read alone.
	s := &Subject{Pod: pod, Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}, maps: newObjectMaps()}
	v, err := m.ContainerUsage(s, &pod.Spec.Containers[c], res)
	if err != nil {
		t.Fatalf("%s of %s/%s: %v", res, pod.Name, pod.Spec.Containers[c].Name, err)
	}
	return v
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Without any declaration a container uses half its requests, or KWOK's
// defaults (1m, 1Mi) where it requests nothing.
func TestDefaultUsage(t *testing.T) {
	m := newModel(t)
	pod := testPod("default", "web", nil, container("app", "200m", "256Mi"), container("side", "", ""))
	for _, c := range []struct {
		container int
		res       string
		want      float64
	}{
		{0, "cpu", 0.1}, {0, "memory", 128 << 20}, {1, "cpu", 0.001}, {1, "memory", 1 << 20},
	} {
		if got := usageOf(t, m, pod, c.container, c.res); !near(got, c.want) {
			t.Errorf("%s of container %d = %v, want %v", c.res, c.container, got, c.want)
		}
	}
}

// KWOK's own usage-from-annotation manifest, applied unchanged: the pods'
// annotations give their usage, KWOK's defaults otherwise.
func TestKWOKUsageFromAnnotation(t *testing.T) {
	data, err := os.ReadFile("../../test/e2e/testdata/kwok-v0.8.0/metrics/usage/usage-from-annotation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var u kwokv1alpha1.ClusterResourceUsage
	if err := yaml.UnmarshalStrict(data, &u); err != nil {
		t.Fatal(err)
	}
	m := newModel(t)
	if err := m.SetClusterResourceUsage(&u); err != nil {
		t.Fatal(err)
	}
	annotated := testPod("default", "a", map[string]string{"kwok.x-k8s.io/usage-cpu": "750m", "kwok.x-k8s.io/usage-memory": "3Gi"}, container("app", "1", "1Gi"))
	plain := testPod("default", "b", nil, container("app", "1", "1Gi"))
	for _, c := range []struct {
		pod  *corev1.Pod
		res  string
		want float64
	}{
		{annotated, "cpu", 0.75}, {annotated, "memory", 3 << 30}, {plain, "cpu", 0.001}, {plain, "memory", 1 << 20},
	} {
		if got := usageOf(t, m, c.pod, 0, c.res); !near(got, c.want) {
			t.Errorf("%s of %s = %v, want %v", c.res, c.pod.Name, got, c.want)
		}
	}
}

func mustUsage(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatal(err)
	}
}

// A pod's ResourceUsage comes first, then ClusterResourceUsages by name
// that select it; per container, the entry naming it, else the one naming
// none; and what none declares falls to the default.
func TestPrecedence(t *testing.T) {
	m := newModel(t)
	var ru kwokv1alpha1.ResourceUsage
	mustUsage(t, `
metadata: {name: web, namespace: shop}
spec:
  usages:
  - containers: [app]
    usage: {cpu: {value: 300m}}
`, &ru)
	var a, b kwokv1alpha1.ClusterResourceUsage
	mustUsage(t, `
metadata: {name: a-shop}
spec:
  selector: {matchNamespaces: [shop]}
  usages:
  - usage: {cpu: {expression: 'Quantity("100m") * 2.0'}, memory: {value: 64Mi}}
`, &a)
	mustUsage(t, `
metadata: {name: b-all}
spec:
  usages:
  - containers: [side]
    usage: {cpu: {value: "2"}}
`, &b)
	for _, err := range []error{m.SetResourceUsage(&ru), m.SetClusterResourceUsage(&b), m.SetClusterResourceUsage(&a)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	web := testPod("shop", "web", nil, container("app", "1", "1Gi"), container("side", "1", "1Gi"))
	other := testPod("blog", "web", nil, container("app", "1", "1Gi"), container("side", "1", "1Gi"))
	for _, c := range []struct {
		pod       *corev1.Pod
		container int
		res       string
		want      float64
	}{
		{web, 0, "cpu", 0.3},            // its ResourceUsage
		{web, 0, "memory", 64 << 20},    // not there: a-shop's entry for all
		{web, 1, "cpu", 0.2},            // a-shop before b-all
		{other, 1, "cpu", 2},            // b-all only
		{other, 0, "cpu", 0.5},          // nothing: the default
		{other, 0, "memory", 512 << 20}, // nothing: the default
	} {
		if got := usageOf(t, m, c.pod, c.container, c.res); !near(got, c.want) {
			t.Errorf("%s of %s/%s = %v, want %v", c.res, c.pod.Namespace, c.pod.Spec.Containers[c.container].Name, got, c.want)
		}
	}
	m.DeleteResourceUsage("shop", "web")
	m.DeleteClusterResourceUsage("a-shop")
	if got := usageOf(t, m, web, 0, "cpu"); !near(got, 0.5) {
		t.Errorf("after the deletes, cpu of shop/web/app = %v, want the default 0.5", got)
	}
}

// A ClusterResourceUsage with labels (kubesim's addition) selects by them
// too; a label selector that does not parse selects nothing and says so.
func TestLabelSelector(t *testing.T) {
	m := newModel(t)
	var web, bad kwokv1alpha1.ClusterResourceUsage
	mustUsage(t, `
metadata: {name: web}
spec:
  selector: {matchNamespaces: [shop], matchLabels: {app: web}, matchExpressions: [{key: tier, operator: NotIn, values: [db]}]}
  usages: [{usage: {cpu: {value: 900m}}}]
`, &web)
	mustUsage(t, `
metadata: {name: bad}
spec:
  selector: {matchExpressions: [{key: app, operator: Sometimes}]}
  usages: [{usage: {cpu: {value: "3"}}}]
`, &bad)
	if err := m.SetClusterResourceUsage(&web); err != nil {
		t.Fatal(err)
	}
	if err := m.SetClusterResourceUsage(&bad); err == nil || !strings.Contains(err.Error(), "spec.selector") {
		t.Errorf("a bad label selector: %v, want an error naming spec.selector", err)
	}
	pod := func(ns string, l map[string]string) *corev1.Pod {
		p := testPod(ns, "p", nil, container("c", "1", ""))
		p.Labels = l
		return p
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		want float64
	}{
		{pod("shop", map[string]string{"app": "web"}), 0.9},
		{pod("shop", map[string]string{"app": "web", "tier": "db"}), 0.5}, // NotIn
		{pod("shop", map[string]string{"app": "api"}), 0.5},
		{pod("blog", map[string]string{"app": "web"}), 0.5}, // namespace
	} {
		if got := usageOf(t, m, c.pod, 0, "cpu"); !near(got, c.want) {
			t.Errorf("cpu of a pod in %s labelled %v = %v, want %v", c.pod.Namespace, c.pod.Labels, got, c.want)
		}
	}
}

// Expressions see the pod, its node and the container, and KWOK's
// functions: a usage can follow a pod's age or its requests.
func TestExpressions(t *testing.T) {
	pod := testPod("default", "web", map[string]string{"load": "0.8"}, container("app", "500m", "1Gi"))
	for _, c := range []struct {
		expr string
		want float64
	}{
		{`pod.SinceSecond() > 30.0 ? Quantity("1") : Quantity("10m")`, 1},
		{`Quantity(container.resources.requests.cpu) * Quantity(pod.metadata.annotations["load"])`, 0.4},
		{`node.metadata.name == "node-0" ? 2 : 3`, 2},
		{`Quantity("1Gi") / 2.0`, 512 << 20},
	} {
		m := newModel(t)
		var u kwokv1alpha1.ClusterResourceUsage
		u.Name = "x"
		u.Spec.Usages = []kwokv1alpha1.ResourceUsageContainer{{Usage: map[string]kwokv1alpha1.ResourceUsageValue{"cpu": {Expression: &c.expr}}}}
		if err := m.SetClusterResourceUsage(&u); err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := usageOf(t, m, pod, 0, "cpu"); !near(got, c.want) {
			t.Errorf("%s = %v, want %v", c.expr, got, c.want)
		}
	}
}

// Bad usage: an expression that does not compile, one that returns no
// number or a negative one, a negative value. Each is an error naming the
// usage object and the field; the containers it covers report no usage,
// the others theirs.
func TestBadUsage(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		compileErr  string // "": compiles
		evalErr     string
	}{
		{"syntax", `{expression: 'Quantity("1m" *'}`, "spec.usages[0].usage.cpu.expression", ""},
		{"reads usage", `{expression: 'pod.Usage("cpu")'}`, "spec.usages[0].usage.cpu.expression", ""},
		{"not a number", `{expression: '"fast"'}`, "", "not a number"},
		{"negative expression", `{expression: '0.0 - 1.0'}`, "", "negative"},
		{"missing field", `{expression: 'Quantity(pod.metadata.annotations["nope"])'}`, "", "nope"},
		{"negative value", `{value: "-1"}`, "spec.usages[0].usage.cpu.value: -1 is negative", ""},
		// Past what metrics.k8s.io carries (an int64 of nanocores): it would
		// be served wrapped round to a negative usage.
		{"value too large", `{value: "1e300"}`, "spec.usages[0].usage.cpu.value: 1e+300 is more than metrics.k8s.io can carry", ""},
		{"value just too large", `{value: "9300000000"}`, "spec.usages[0].usage.cpu.value: 9.3e+09 is more than", ""},
		{"expression too large", `{expression: 'Quantity("1e300")'}`, "", "1e+300 is more than metrics.k8s.io can carry"},
		// Loops that cost more than an evaluation may, for any pod.
		{"over the cost limit", `{expression: '` + tenToThe4 + ` ? 1.0 : 0.0'}`, "spec.usages[0].usage.cpu.expression", "over the limit of 10000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t)
			var u kwokv1alpha1.ClusterResourceUsage
			mustUsage(t, `
metadata: {name: bad}
spec:
  usages:
  - containers: [app]
    usage: {cpu: `+c.usage+`}
`, &u)
			err := m.SetClusterResourceUsage(&u)
			if c.compileErr == "" && err != nil {
				t.Fatalf("compiling: %v", err)
			}
			if c.compileErr != "" && (err == nil || !strings.Contains(err.Error(), c.compileErr)) {
				t.Fatalf("compiling: %v, want an error naming %q", err, c.compileErr)
			}
			pod := testPod("default", "web", nil, container("app", "1", "1Gi"), container("side", "1", "1Gi"))
			s := &Subject{Pod: pod, maps: newObjectMaps()}
			_, err = m.ContainerUsage(s, &pod.Spec.Containers[0], "cpu")
			var ee *EvalError
			if !errors.As(err, &ee) || ee.Usage.Name != "bad" || !strings.Contains(err.Error(), c.evalErr) {
				t.Errorf("evaluating: %v, want an error of ClusterResourceUsage bad saying %q", err, c.evalErr)
			}
			if v, err := m.ContainerUsage(s, &pod.Spec.Containers[1], "cpu"); err != nil || !near(v, 0.5) {
				t.Errorf("the other container: %v, %v; want its default 0.5", v, err)
			}
		})
	}
}

// tenToThe4 loops 10^4 times, past kwokcel.UsageCostLimit.
const tenToThe4 = `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a+b+c+d > 0))))`

// The maps kept for expressions hold the fields they read, and a usage
// declared later that reads more sees them: the maps are made anew.
func TestKeptMapsHoldWhatExpressionsRead(t *testing.T) {
	m := newModel(t)
	maps := newObjectMaps()
	pod := testPod("default", "web", map[string]string{"load": "0.8"}, container("app", "500m", "1Gi"))
	pod.UID, pod.ResourceVersion = "u1", "1"
	declare := func(cpu, memory string) {
		t.Helper()
		var u kwokv1alpha1.ClusterResourceUsage
		u.Name = "x"
		u.Spec.Usages = []kwokv1alpha1.ResourceUsageContainer{{Usage: map[string]kwokv1alpha1.ResourceUsageValue{"cpu": {Expression: &cpu}, "memory": {Expression: &memory}}}}
		if err := m.SetClusterResourceUsage(&u); err != nil {
			t.Fatal(err)
		}
	}
	read := func(res string) float64 {
		t.Helper()
		v, err := m.ContainerUsage(&Subject{Pod: pod, maps: maps}, &pod.Spec.Containers[0], res)
		if err != nil {
			t.Fatalf("%s: %v", res, err)
		}
		return v
	}
	declare(`Quantity("50m") * (1.0 + Rand())`, `Quantity("64Mi")`)
	if read("cpu"); len(maps.entries) != 0 {
		t.Errorf("expressions read no pod, yet its map is kept: %v", maps.entries)
	}
	declare(`Quantity(pod.metadata.annotations["load"])`, `Quantity("64Mi")`)
	if got := read("cpu"); !near(got, 0.8) {
		t.Errorf("cpu %v, want 0.8", got)
	}
	want := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"load": "0.8"}}}
	if kept := maps.entries[pod.UID].m; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %v of the pod, want %v", kept, want)
	}
	declare(`Quantity(pod.metadata.annotations["load"])`, `Quantity(container.resources.requests.memory) / 2.0`)
	if got := read("memory"); !near(got, 512<<20) {
		t.Errorf("memory %v, want 512Mi", got)
	}
}

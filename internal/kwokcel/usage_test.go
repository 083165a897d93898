package kwokcel

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// fakeReader answers with a number that says what was asked.
type fakeReader struct{ asked []string }

func (f *fakeReader) Usage(kind, namespace, name, resource, container string, cumulative bool) (float64, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s %s/%s %s %q %v", kind, namespace, name, resource, container, cumulative))
	return 42, nil
}

// Every expression of KWOK's own /metrics/resource Metric compiles in the
// metric environment, and Usage and CumulativeUsage ask the reader about
// the container, pod or node they are called on.
func TestKWOKMetricsResourceExpressions(t *testing.T) {
	data, err := os.ReadFile("../../test/e2e/testdata/kwok-v0.8.0/metrics/resource/metrics-resource.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m kwokv1alpha1.Metric
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatal(err)
	}
	r := &fakeReader{}
	env, err := NewMetricEnv(r)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{
		"pod":       map[string]any{"kind": "Pod", "metadata": map[string]any{"namespace": "ns", "name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"}},
		"node":      map[string]any{"kind": "Node", "metadata": map[string]any{"name": "node-0"}},
		"container": map[string]any{"name": "app"},
	}
	for _, mc := range m.Spec.Metrics {
		p, err := env.Compile(mc.Value)
		if err != nil {
			t.Errorf("%s: %v", mc.Name, err)
			continue
		}
		if _, err := p.Number(vars); err != nil {
			t.Errorf("%s: %v", mc.Name, err)
		}
		// The objects kept to the fields the expression reads ask the same.
		kept := map[string]any{}
		for name, v := range vars {
			if f := p.Fields(name); f != nil {
				kept[name] = f.Keep(v)
			}
		}
		if _, err := p.Number(kept); err != nil {
			t.Errorf("%s, on the fields it reads: %v", mc.Name, err)
		}
	}
	var want []string
	for _, asked := range []string{
		`Pod ns/web cpu "app" true`, `Pod ns/web memory "app" false`, `Pod ns/web cpu "" true`,
		`Pod ns/web memory "" false`, `Node /node-0 cpu "" true`, `Node /node-0 memory "" false`,
	} {
		want = append(want, asked, asked) // on the whole objects, then on the fields read
	}
	if fmt.Sprint(r.asked) != fmt.Sprint(want) {
		t.Errorf("asked\n%q\nwant\n%q", r.asked, want)
	}
	// Usage is no function of the usage environment.
	usageEnv, err := NewUsageEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := usageEnv.Compile(`pod.Usage("cpu")`); err == nil {
		t.Error("a usage expression that reads usage compiled")
	}
}

func TestReads(t *testing.T) {
	env, err := NewUsageEnv()
	if err != nil {
		t.Fatal(err)
	}
	p, err := env.Compile(`node.metadata.name == "n" ? Quantity(pod.metadata.name) : 1.0`)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Reads("node") || !p.Reads("pod") || p.Reads("container") || p.Reads("Quantity") {
		t.Errorf("reads %v, want pod and node", p.vars)
	}
}

// A usage expression whose own loops cost more than UsageCostLimit is
// refused when compiled, saying what it may cost; one that loops over what
// a pod holds is not (its size is not known), and is stopped at the limit
// when a pod makes it run past it, its cost reported.
func TestUsageCostLimit(t *testing.T) {
	env, err := NewUsageEnv()
	if err != nil {
		t.Fatal(err)
	}
	ten := "[1,2,3,4,5,6,7,8,9,10]"
	loops := fmt.Sprintf(`%s.all(a, %s.all(b, %s.all(c, %s.all(d, a+b+c+d > 0)))) ? 1.0 : 0.0`, ten, ten, ten, ten)
	_, err = env.Compile(loops)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 10000") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a 10^4-iteration loop compiled: %v", err)
	}
	// Within the limit for the pods it is written for.
	perContainer := `pod.spec.containers.all(a, pod.spec.containers.all(b, a.name != b.name || a == b)) ? 1.0 : 0.0`
	p, err := env.Compile(perContainer)
	if err != nil {
		t.Fatal(err)
	}
	podWith := func(n int) map[string]any {
		var cs []any
		for i := range n {
			cs = append(cs, map[string]any{"name": fmt.Sprint(i)})
		}
		return map[string]any{"pod": map[string]any{"spec": map[string]any{"containers": cs}}}
	}
	f, cost, err := p.NumberCost(podWith(3))
	if err != nil || f != 1 || cost == 0 || cost > 1000 {
		t.Fatalf("3 containers: %v, cost %d, %v", f, cost, err)
	}
	_, cost, err = p.NumberCost(podWith(300)) // 90,000 iterations
	if !errors.Is(err, ErrOverBudget) || cost < UsageCostLimit {
		t.Fatalf("300 containers: cost %d, %v; want stopped at the limit", cost, err)
	}
	// A Stage's expressions keep their own, larger limit and no estimate.
	if _, err := Compile(loops); err != nil {
		t.Errorf("a Stage's expression: %v", err)
	}
}

package report

import (
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

func ptrTo(v float64) *float64 { return &v }

// An HPA's chart: its samples as data and as step paths, its target, and
// the usage steps marked; a scenario without HPAs has none.
func TestHTMLChartsAnHPA(t *testing.T) {
	r := &result.Scenario{Name: "spike", File: "s.yaml", Duration: 40 * time.Second, Passed: true, Steps: []*result.Step{
		{Name: "load 30 %", Action: "usage", Start: 4 * time.Second, Detail: "pods app=web in default: cpu 60m per container"},
		{Name: "the spike", Action: "usage", Start: 15 * time.Second, Detail: "pods app=web in default: cpu 300m per container"},
		{Name: "wait", Action: "wait", Start: 16 * time.Second, Duration: 3 * time.Second},
	}, Autoscalers: []*result.Autoscaler{{Name: "default/web", Metric: "cpu utilisation %", Target: 50, MinReplicas: 2, MaxReplicas: 6, Samples: []result.AutoscalerSample{
		{At: 5 * time.Second, CurrentReplicas: 2, DesiredReplicas: 2},
		{At: 8 * time.Second, CurrentReplicas: 2, DesiredReplicas: 2, Metric: ptrTo(30)},
		{At: 17 * time.Second, CurrentReplicas: 2, DesiredReplicas: 6, Metric: ptrTo(150)},
		{At: 19 * time.Second, CurrentReplicas: 6, DesiredReplicas: 6, Metric: ptrTo(150)},
	}}}}
	page := writeHTML(t, []*result.Scenario{r})
	for _, want := range []string{
		`HorizontalPodAutoscaler <b>default/web</b>: replicas and cpu utilisation % over time`,
		`class="hpachart" data-hpa="default/web" data-samples="5.0:2/2:-;8.0:2/2:30;17.0:2/6:150;19.0:6/6:150"`,
		`class="target">target 50</text>`,
		`<text x="`, `class="usage">cpu 300m</text>`,
		`<title>the spike at 15.0s: pods app=web in default: cpu 300m per container</title>`,
		`<title>19.0s: 6 current, 6 desired replicas; cpu utilisation % 150</title>`,
		`class="current"/>`, `class="desired"/>`, `class="metric"/>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The metric's path starts at its first value (8 s), not before.
	if i := strings.Index(page, `class="metric"/>`); i < 0 || !strings.Contains(page[strings.LastIndex(page[:i], "<path"):i], `d="M`) {
		t.Errorf("metric path: %s", page[strings.LastIndex(page[:i], "<path"):i])
	}
	if page := writeHTML(t, sampleResults()); strings.Contains(page, `class="hpachart"`) {
		t.Error("a chart without an HPA")
	}
}

func TestNiceCeil(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 3: 5, 165: 200, 55: 100, 11: 20} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", v, got, want)
		}
	}
}

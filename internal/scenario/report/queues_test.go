package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// A ClusterQueue's charts: its Workloads admitted and pending, and each
// quota in use as a percent of its nominal quota, as data and as paths;
// the table and the summary line give the peaks. A scenario without
// Kueue has none of it.
func TestHTMLChartsAClusterQueue(t *testing.T) {
	r := &result.Scenario{Name: "gpus", File: "s.yaml", Duration: 60 * time.Second, Passed: true,
		Steps: []*result.Step{{Name: "submit", Action: "apply", Start: 2 * time.Second}},
		Queues: []*result.Queue{{Name: "gpus", Cohort: "org",
			Quotas: []result.QueueQuota{{Flavor: "h100", Resource: "example.com/gpu", Nominal: 8}, {Flavor: "h100", Resource: "cpu", Nominal: 64}},
			Samples: []result.QueueSample{
				{At: 1 * time.Second, Used: []float64{0, 0}},
				{At: 3 * time.Second, Pending: 10, Admitted: 2, Used: []float64{8, 16}},
				{At: 30 * time.Second, Pending: 9, Admitted: 3, Used: []float64{10, 24}},
			}}}}
	page := writeHTML(t, []*result.Scenario{r})
	for _, want := range []string{
		`<h3>Kueue's ClusterQueues</h3>`,
		`<td>gpus</td><td>org</td><td>10</td><td>3</td><td>example.com/gpu 10 of 8 (h100); cpu 24 of 64 (h100)</td>`,
		`ClusterQueue gpus: Workloads admitted and pending`,
		`data-series="admitted=1.0:0 3.0:2 30.0:3;pending=1.0:0 3.0:10 30.0:9"`,
		`data-series="example.com/gpu of h100 (nominal 8)=1.0:0 3.0:100 30.0:125;cpu of h100 (nominal 64)=1.0:0 3.0:25 30.0:37.5"`,
		`quota in use by admitted Workloads, % of nominal (over 100: borrowed)`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var out bytes.Buffer
	(&Terminal{Out: &out}).ScenarioDone(r)
	if want := "ClusterQueue gpus: peak 10 pending, 3 admitted; most in use: example.com/gpu 10 of 8 (h100); cpu 24 of 64 (h100)"; !strings.Contains(out.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, out.String())
	}
	if page := writeHTML(t, sampleResults()); strings.Contains(page, "ClusterQueues") {
		t.Error("a report without Kueue has a queue section")
	}
}

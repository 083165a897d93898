package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func secPtr(s float64) *time.Duration { d := sec(s); return &d }

// burstFleet is a burst of 100 one-CPU pods on an empty NodePool: 13
// nodes launched 40–52 s into the run, the pods Running as they come;
// scaled to 10 at 120 s, Karpenter consolidates one node at a time
// (budget nodes: "1") down to 2, the last replaced by a cheaper one.
func burstFleet(cluster, pool string, price float64, oneAtATime bool) *result.Fleet {
	f := &result.Fleet{Cluster: cluster, Elastic: true, From: sec(2), To: sec(330)}
	for i := range 13 {
		n := result.NodeLife{Name: fmt.Sprintf("kwok-%s-%02d", pool, i), NodePool: pool, InstanceType: "c-8x-amd64-linux",
			PricePerHour: price, Priced: true, Added: sec(40 + float64(i))}
		if i >= 2 {
			start := 130 + 15*float64(i-2)
			if !oneAtATime {
				start = 130 + 3*float64(i-2)
			}
			n.Disrupting = []result.Span{{From: sec(start), To: secPtr(start + 12)}}
			n.Gone = secPtr(start + 12)
			n.Reason = "Underutilized"
			if i >= 10 {
				n.Reason = "Empty"
			}
		}
		f.Nodes = append(f.Nodes, n)
	}
	f.Pending = []result.Count{{At: sec(5), N: 100}}
	for i := range 13 {
		f.Pending = append(f.Pending, result.Count{At: sec(41 + float64(i)), N: max(0, 100-8*(i+1))})
	}
	for i := range 100 {
		f.Startup = append(f.Startup, sec(35+float64(i%13)+float64(i)/10))
	}
	return f
}

func fleetScenario(fleets ...*result.Fleet) *result.Scenario {
	return &result.Scenario{Name: "autoscale-burst", File: "examples/autoscale-burst.yaml", Duration: sec(330), Passed: true,
		Steps: []*result.Step{
			{Name: "a NodePool limited to 64 CPUs", Action: "apply", Start: sec(2), Duration: sec(1)},
			{Name: "burst to 100", Action: "scale", Start: sec(4), Duration: sec(1)},
			{Name: "all 100 Running", Action: "wait", Start: sec(5), Duration: sec(52), Check: true},
			{Name: "down to 10", Action: "scale", Start: sec(120), Duration: sec(1)},
			{Name: "consolidated", Action: "wait", Start: sec(121), Duration: sec(200), Check: true},
		}, Fleets: fleets}
}

// The report of a cluster with Karpenter: its NodePool's peak, launches,
// disruptions by reason, node-hours and cost; Pending→Running; charts of
// nodes (and those disrupting), Pending pods and cost, their values in
// data-series, scale steps marked.
func TestFleetReport(t *testing.T) {
	page := writeHTML(t, []*result.Scenario{fleetScenario(burstFleet("", "default", 0.34, true))})
	for _, want := range []string{
		`<td>default</td><td>13</td><td>13</td><td>11 <small>(Underutilized 8, Empty 3)</small></td>`,
		`<td>100 pods</td><td>`,
		`class="fleetchart fleet-nodes" data-series="default=2.0:0 40.0:1 41.0:2`,
		`;disrupting=2.0:0 130.0:1 142.0:0 145.0:1`,
		`class="fleetchart fleet-pending" data-series="Pending=2.0:0 5.0:100 41.0:92`,
		`class="fleetchart fleet-cost" data-series="cost=2.0:0 40.0:0 41.0:0.0001`,
		`class="mark">burst to 100</text>`, `class="mark">down to 10</text>`,
		`class="tick end">5.5m end</text>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// Cost so far ends at the node-hours' cost.
	u := result.UsageOf(burstFleet("", "default", 0.34, true).Nodes, sec(2), sec(330))
	if want := fmt.Sprintf(" 330.0:%g\"", float64(int(u.Cost*10000+0.5))/10000); !strings.Contains(page, want) {
		t.Errorf("cost so far does not end at %s", want)
	}
}

// Two clusters, one workload: one table, one set of charts, a row and a
// series a cluster, so that the settings are compared side by side.
func TestFleetReportSideBySide(t *testing.T) {
	page := writeHTML(t, []*result.Scenario{whatIf()})
	for _, want := range []string{
		`<th>cluster</th><th>NodePool</th>`,
		`<tr><td>empty</td><td>default</td>`, `<tr><td>underutilized</td><td>default</td>`,
		`data-series="empty: default=`, `;underutilized: default=`, `;empty: disrupting=`,
		`data-series="empty: Pending=`, `;underutilized: cost=`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := strings.Count(page, `class="fleetchart `); n != 3 {
		t.Errorf("%d fleet charts, want 3 shared by the clusters", n)
	}
	// No fleet, nothing drawn.
	if strings.Contains(writeHTML(t, sampleResults()), `class="fleetchart`) {
		t.Error("a scenario without a node autoscaler has fleet charts")
	}
}

func whatIf() *result.Scenario {
	r := fleetScenario(burstFleet("empty", "default", 0.34, false), burstFleet("underutilized", "default", 0.34, true))
	r.Name, r.File = "consolidation-whatif", "examples/consolidation-whatif.yaml"
	return r
}

// TestWriteFleetReport writes the two reports above to $KUBESIM_FLEET_REPORT
// (a directory) to look at; in Chromium (unless -short), every text of a
// fleet chart is inside it and nothing is wider than the window.
func TestWriteFleetReport(t *testing.T) {
	pages := map[string]string{
		"burst.html":  writeHTML(t, []*result.Scenario{fleetScenario(burstFleet("", "default", 0.34, true))}),
		"whatif.html": writeHTML(t, []*result.Scenario{whatIf()}),
	}
	if out := os.Getenv("KUBESIM_FLEET_REPORT"); out != "" {
		for name, page := range pages {
			if err := os.WriteFile(filepath.Join(out, name), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if testing.Short() {
		return
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH")
	}
	for name, page := range pages {
		file := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", report20Measure+"</body>", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,2400", "--dump-dom", "file://"+file).Output()
		cancel()
		if err != nil {
			t.Fatalf("chromium --dump-dom: %v", err)
		}
		m := regexp.MustCompile(`data-layout="([^"]*)"`).FindStringSubmatch(string(out))
		if m == nil || m[1] != "ok" {
			t.Errorf("%s: layout %v", name, m)
		}
	}
}

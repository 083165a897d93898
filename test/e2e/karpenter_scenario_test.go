//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKarpenterScenario runs examples/autoscale-burst.yaml, a smaller
// burst (20 pods of 1 CPU, then 4): Karpenter launches the nodes, every
// pod runs within the NodePool's limit, consolidation takes the nodes
// down to one, never two disrupting at once, at a bounded cost. The run
// says each NodePool's nodes, cost and the pods' Pending→Running times;
// its report charts the nodes over time and renders in Chromium.
func TestKarpenterScenario(t *testing.T) {
	e := shortHome(t, newEnvAlone(t))
	report := filepath.Join(t.TempDir(), "autoscale-burst.html")
	started := time.Now()
	r := e.run("run", filepath.Join("..", "..", "examples", "autoscale-burst.yaml"), "--set", "replicas=20", "--set", "after=4", "--set", "nodesAfter=1",
		"--report", report, "--timeout", "30m") // cluster time: 3m real at the example's 10×
	t.Logf("autoscale-burst (20 pods): %.1fs wall\n%s", time.Since(started).Seconds(), r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "PASSED autoscale-burst") {
		t.Fatalf("autoscale-burst did not pass: %s", r)
	}
	for _, want := range []string{
		"✓ within the NodePool's limit", "✓ never two nodes disrupting at once (the budget)", "✓ the nodes cost at most a dollar over the run",
		"NodePool default: peak ", "Pending→Running of ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	// The nodes chart's series "default": 0 at the first step, up to what
	// 20 pods of 1 CPU need on 8-CPU nodes, back to 1 at the end.
	m := regexp.MustCompile(`class="fleetchart fleet-nodes" data-series="default=([^;"]*)`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the report has no chart of NodePool default's nodes")
	}
	var values []float64
	for _, p := range strings.Fields(string(m[1])) {
		_, v, _ := strings.Cut(p, ":")
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("sample %q: %v", p, err)
		}
		values = append(values, n)
	}
	peak := 0.0
	for _, v := range values {
		peak = max(peak, v)
	}
	if len(values) < 3 || values[0] != 0 || peak < 3 || peak > 16 || values[len(values)-1] != 1 {
		t.Errorf("nodes over time %v: want 0 first, a peak of 3 to 16, 1 at the end", values)
	}
	for _, want := range []string{`class="fleetchart fleet-pending"`, `class="fleetchart fleet-cost"`, `<th>Pending→Running</th>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %s", want)
		}
	}
	dom := renderReport(t, report, "1280,1500", "autoscale-burst-report.png")
	if !strings.Contains(dom, "fleet-nodes") || !strings.Contains(dom, "1 of 1 scenarios passed") {
		t.Errorf("the rendered report lacks its nodes chart or summary")
	}
}

// tooFewNodes bounds a burst that needs two 8-CPU nodes to one node.
const tooFewNodes = `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: too-few-nodes
cluster: {autoscaler: {karpenter: {}}, timeScale: 10}
steps:
- apply:
    resources:
    - {apiVersion: karpenter.kwok.sh/v1alpha1, kind: KWOKNodeClass, metadata: {name: default}, spec: {}}
    - apiVersion: karpenter.sh/v1
      kind: NodePool
      metadata: {name: default}
      spec:
        template:
          spec:
            nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
            requirements:
            - {key: karpenter.kwok.sh/instance-cpu, operator: In, values: ["8"]}
            - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 10
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]}
- wait: {pods: {selector: app=web, phase: Running, count: 10}}
  timeout: 10m
- assert:
  - name: one node is enough
    maxNodes: {selector: karpenter.sh/nodepool=default, max: 1}
`

// A maxNodes bound the run broke fails the scenario, naming the
// assertion, what it expected, and how many nodes there were at once.
func TestKarpenterScenarioMaxNodesFails(t *testing.T) {
	e := shortHome(t, newEnv(t))
	file := filepath.Join(t.TempDir(), "too-few-nodes.yaml")
	writeFile(t, file, []byte(tooFewNodes))
	r := e.run("run", file, "--timeout", "20m")
	t.Logf("%s", r.stdout)
	if r.code != 1 || !strings.Contains(r.stdout, "FAILED too-few-nodes") {
		t.Fatalf("want exit 1 and the scenario failed: %s", r)
	}
	for _, want := range []string{"✗ one node is enough", "expected: at most 1 at once", "at once at "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

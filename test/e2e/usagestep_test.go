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

// TestHPASpikeReport runs examples/hpa-spike.yaml with --report: the page
// charts the HPA's replicas and CPU utilisation as the run went (held at 2
// at 30 %, out to 6 at 150 %, back to 2 at 10 %), with the three usage
// steps marked; it renders in headless Chromium, whose screenshot is kept.
func TestHPASpikeReport(t *testing.T) {
	e := shortHome(t, newEnv(t))
	dir := t.TempDir()
	report := filepath.Join(dir, "hpa-spike.html")
	r := e.run("run", filepath.Join("..", "..", "examples", "hpa-spike.yaml"), "--report", report)
	if r.code != 0 {
		t.Fatalf("hpa-spike did not pass: %s", r)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`class="hpachart" data-hpa="default/web" data-samples="([^"]*)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the report has no chart of HPA default/web")
	}
	// Each sample is seconds:current/desired:utilisation; the run's shape
	// must show in them, in order.
	type sample struct {
		at               float64
		current, desired int
		util             string
	}
	var samples []sample
	for _, f := range strings.Split(string(m[1]), ";") {
		var s sample
		parts := strings.Split(f, ":")
		if len(parts) != 3 {
			t.Fatalf("sample %q: want seconds:current/desired:metric", f)
		}
		s.at, _ = strconv.ParseFloat(parts[0], 64)
		c, d, _ := strings.Cut(parts[1], "/")
		s.current, _ = strconv.Atoi(c)
		s.desired, _ = strconv.Atoi(d)
		s.util = parts[2]
		samples = append(samples, s)
	}
	want := []func(sample) bool{
		func(s sample) bool { return s.current == 2 && s.desired == 2 && s.util == "30" },
		func(s sample) bool { return s.desired == 6 && s.util == "150" },
		func(s sample) bool { return s.current == 6 && s.desired == 6 },
		func(s sample) bool { return s.util == "10" },
		func(s sample) bool { return s.desired == 2 }, // the run ends once the Deployment has 2
	}
	next, last := 0, -1.0
	for _, s := range samples {
		if s.at < last {
			t.Errorf("samples out of order: %s", m[1])
		}
		last = s.at
		for next < len(want) && want[next](s) { // one sample may show two turns
			next++
		}
	}
	if next < len(want) {
		t.Errorf("the samples lack step %d of held at 2 at 30 %% → 6 desired at 150 %% → 6 → 10 %% → 2 desired: %s", next+1, m[1])
	}
	for _, label := range []string{"cpu 60m", "cpu 300m", "cpu 20m"} {
		if !strings.Contains(string(page), `class="usage">`+label+`</text>`) {
			t.Errorf("the chart does not mark the usage step %q", label)
		}
	}

	dom := renderReport(t, report, "1000,900", "hpa-spike-report.png")
	if !strings.Contains(dom, `class="hpachart"`) || !strings.Contains(dom, "1 of 1 scenarios passed") {
		t.Errorf("the rendered report lacks its chart or summary")
	}
}

// A usage step on a cluster made with usage disabled fails at once, saying
// why, rather than wait out its timeout for a component that is not there.
func TestUsageStepWithUsageDisabled(t *testing.T) {
	e := shortHome(t, newEnv(t))
	file := filepath.Join(t.TempDir(), "off.yaml")
	writeFile(t, file, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: off
cluster: {usage: {disabled: true}}
steps:
- usage: {selector: app=web, cpu: 900m}
`))
	started := time.Now()
	r := e.run("run", file)
	if r.code != 1 || !strings.Contains(r.stdout, "usage: {disabled: true}: nothing serves usage") {
		t.Fatalf("want exit 1 naming usage: {disabled: true}: %s", r)
	}
	if took := time.Since(started); took > 45*time.Second {
		t.Errorf("took %s: the step waited rather than fail at once", took)
	}
}

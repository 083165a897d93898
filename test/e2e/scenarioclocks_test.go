//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// clockScenario is a one-node scenario named name on a clock timeScale
// times real time: a pod runs, and a sleep passes on that clock.
func clockScenario(name string, timeScale int) string {
	return `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: ` + name + `
cluster: {nodeGroups: [{count: 1}], timeScale: ` + strconv.Itoa(timeScale) + `}
steps:
- apply:
    resource: {apiVersion: v1, kind: Pod, metadata: {name: p, labels: {app: p}}, spec: {containers: [{name: c, image: nginx}]}}
- wait: {pods: {selector: app=p, phase: Running, count: 1}}
- sleep: 20s
- assert:
  - pods: {selector: app=p, phase: Running, count: 1}
`
}

// One `kubesim run` of scenarios on different clocks runs each clock's in
// a process of its own and reports them together: one summary, one JUnit
// file, one HTML report, exit 0 when all pass.
func TestRunScenariosOnDifferentClocks(t *testing.T) {
	e := shortHome(t, newEnvAlone(t))
	dir := t.TempDir()
	for name, scale := range map[string]int{"fast": 10, "real": 1, "fast-too": 10} {
		writeFile(t, filepath.Join(dir, name+".yaml"), []byte(clockScenario(name, scale)))
	}
	junit, report := filepath.Join(dir, "out.xml"), filepath.Join(dir, "out.html")
	r := e.run("run", filepath.Join(dir, "fast.yaml"), filepath.Join(dir, "real.yaml"), filepath.Join(dir, "fast-too.yaml"),
		"--junit", junit, "--report", report)
	if r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	for _, name := range []string{"fast", "real", "fast-too"} {
		if !strings.Contains(r.stdout, "PASSED "+name) {
			t.Errorf("no PASSED %s in the run's output:\n%s", name, r.stdout)
		}
	}
	for file, wants := range map[string][]string{junit: {`name="fast"`, `name="real"`, `name="fast-too"`}, report: {"fast", "real", "fast-too"}} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %q", filepath.Base(file), want)
			}
		}
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "scn-") {
		t.Errorf("the run's clusters were left behind: %s", out)
	}
}

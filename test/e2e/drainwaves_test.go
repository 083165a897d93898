//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// drainWaves drains pool=old (4 nodes) two at a time after a surge of two
// new nodes. The pair's two pods sit on the first wave's nodes under a
// budget of maxUnavailable 1, so the second eviction is refused until the
// first pod's replacement is Running; legacy is pinned to pool=old, so it
// is left Pending once the last old node is cordoned. Pods take the
// realistic stages' seconds to start, as they would in a real cluster;
// with the fast ones a replacement is Ready before the next eviction.
const drainWaves = `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: waves
cluster:
  stages: realistic
  nodeGroups:
  - {name: old, count: 4, labels: {pool: old}}
  - {name: new, count: 0, labels: {pool: new}}
steps:
- name: pin the pair to old-0 and old-1 while it schedules
  cordon: {selector: "kubernetes.io/hostname notin (old-0,old-1)"}
- apply:
    resources:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: pair}
      spec:
        replicas: 2
        selector: {matchLabels: {app: pair}}
        template:
          metadata: {labels: {app: pair}}
          spec:
            affinity:
              podAntiAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                - {labelSelector: {matchLabels: {app: pair}}, topologyKey: kubernetes.io/hostname}
            containers: [{name: c, image: nginx}]
    - apiVersion: policy/v1
      kind: PodDisruptionBudget
      metadata: {name: pair}
      spec: {maxUnavailable: 1, selector: {matchLabels: {app: pair}}}
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: legacy}
      spec:
        replicas: 1
        selector: {matchLabels: {app: legacy}}
        template:
          metadata: {labels: {app: legacy}}
          spec:
            nodeSelector: {pool: old}
            containers: [{name: c, image: nginx}]
- wait: {pods: {selector: "app in (pair,legacy)", phase: Running, ready: true, count: 3}}
  timeout: 60s
- uncordon: {selector: "kubernetes.io/hostname notin (old-0,old-1)"}
- wait: {pdb: {name: pair, disruptionsAllowed: 1}}
- name: rehearse
  drain: {nodes: {selector: pool=old}, maxUnavailable: 2, surge: {nodeGroup: new, count: 2}}
  timeout: 2m
- assert:
  - pods: {selector: app=pair, phase: Running, ready: true, count: 2}
  - pods: {selector: app=legacy, phase: Pending, count: 1}
  - name: nothing left on the old pool
    pods: {nodeSelector: pool=old, count: 0}
  - nodes: {nodes: {selector: pool=new}, ready: true, count: 2}
  - pdb: {name: pair, disruptionsAllowed: 1}
`

// TestDrainWaves: a drain in waves after a surge, with a budget that
// refuses for a while and a pod left Pending; the terminal, JUnit and HTML
// reports say per wave what was evicted, what was refused, by which
// budget and for how long, and why the pod is Pending. The HTML report is
// rendered in headless Chromium and its screenshot kept.
func TestDrainWaves(t *testing.T) {
	e := shortHome(t, newEnv(t))
	dir := t.TempDir()
	file, junit, report := filepath.Join(dir, "waves.yaml"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.html")
	writeFile(t, file, []byte(drainWaves))
	r := e.run("run", file, "--junit", junit, "--report", report)
	t.Logf("%s", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "PASSED waves") {
		t.Fatalf("the scenario did not pass: %s", r)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`✓ rehearse  [0-9.]+s  \d+ evicted in 2 waves, \d+ refused for a while, 1 left Pending`),
		regexp.MustCompile(`surge: node group new \+2 \(new-0 new-1\), Ready after [0-9.]+s`),
		regexp.MustCompile(`wave 1/2: old-0 old-1: [34] evicted, [1-9] refused for a while, [0-9.]+s`),
		// Refused until the first pod's replacement is Running: a while, not no time.
		regexp.MustCompile(`default/pair-\S+ refused by PDB pair for (0\.[1-9]|[1-9][0-9]*\.[0-9])s, then evicted`),
		regexp.MustCompile(`wave 2/2: old-2 old-3: [1-9] evicted`),
		regexp.MustCompile(`left Pending: 1\n\s+default/legacy-\S+: 0/6 nodes are available: .*node\(s\) didn't match Pod's node affinity/selector`),
	} {
		if !want.MatchString(r.stdout) {
			t.Errorf("output lacks %s", want)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="rehearse: wave 1/2 (old-0 old-1)"`, `name="rehearse: surge"`, `name="rehearse: left Pending"`, "refused by PDB pair for"} {
		if !strings.Contains(string(x), want) {
			t.Errorf("junit lacks %q:\n%s", want, x)
		}
	}

	page := renderReport(t, report, "1300,1800", "drain-waves-report.png")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<td>1/2</td><td>old-0, old-1</td>`),
		regexp.MustCompile(`<b>default/pair-\S+</b> by PDB <b>pair</b> for <b>[0-9.]+s</b>, then evicted`),
		regexp.MustCompile(`left Pending \(1\)`),
		regexp.MustCompile(`<td>default/legacy-\S+</td><td>0/6 nodes are available: `),
	} {
		if !want.MatchString(page) {
			t.Errorf("the rendered report lacks %s", want)
		}
	}
}

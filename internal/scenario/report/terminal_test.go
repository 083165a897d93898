package report

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// The summary, byte for byte: users and the end-to-end tests read it.
func TestTerminalSummary(t *testing.T) {
	var out bytes.Buffer
	term := &Terminal{Out: &out}
	r := sampleResults()[0]
	r.Steps = append(r.Steps,
		&result.Step{Name: "kubectl", Action: "kubectl", Line: 9, Cluster: "red", Duration: 1500 * time.Millisecond, Output: "NAME\nweb\n"},
		&result.Step{Name: "drain", Action: "drain", Line: 11, Detail: "1 evicted,\n 1 refused", Error: "drain did not complete in 1s"},
	)
	term.ScenarioStarted(r)
	term.ClustersReady([]string{"scn-a", "scn-b"}, 1200*time.Millisecond)
	for _, s := range r.Steps {
		term.StepStarted(s)
		term.StepDone(r, s)
	}
	term.ClusterKept("scn-a")
	term.CleanupFailed("scn-b", errors.New("gone"))
	term.ScenarioDone(r)
	want := `Scenario s (s.yaml)
  ✓ clusters ready: scn-a, scn-b (1.2s)
  ✓ wait  1.0s  pods (all) = 1
  ✗ assert  0.0s  1/2 passed
      ✓ ok
      ✗ bad <one>
          expected: 1
          actual:   2
      placement:
      topology.kubernetes.io/zone=a
        n1               web×2
      topology.kubernetes.io/zone=b
        n2               (cordoned) -
        (pending)        web×1
  ✓ kubectl  1.5s  [red]
      NAME
      web
  ✗ drain  0.0s  1 evicted, 1 refused
      s.yaml:11: drain did not complete in 1s
  kept cluster scn-a (kubesim kubectl --name scn-a get pods -o wide)
  cleaning up scn-b: gone
FAILED s in 3.0s

`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

// On a terminal, a step's line shows while it runs and is drawn over.
func TestTerminalDrawsTheRunningStepLive(t *testing.T) {
	var out bytes.Buffer
	term := &Terminal{Out: &out, Live: true}
	r := &result.Scenario{Name: "s", File: "s.yaml"}
	s := &result.Step{Name: "sleep", Duration: time.Second}
	term.StepStarted(s)
	term.StepDone(r, s)
	if want := "  … sleep\r\033[K  ✓ sleep  1.0s\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestTerminalSaysWhyClustersFailed(t *testing.T) {
	var out bytes.Buffer
	(&Terminal{Out: &out}).ClustersFailed(&result.Scenario{Setup: "creating cluster x: boom"})
	if want := "  ✗ clusters: creating cluster x: boom\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// A drain's waves show under its line, whether it passed or not.
func TestTerminalShowsADrainsWaves(t *testing.T) {
	var out bytes.Buffer
	r := &result.Scenario{Name: "s", File: "s.yaml"}
	(&Terminal{Out: &out}).StepDone(r, &result.Step{Name: "rehearse", Action: "drain", Line: 3, Duration: 65 * time.Second,
		Detail: "3 evicted, 1 refused", Error: "drain did not complete in 1m0s", Drain: sampleDrain()})
	want := `  ✗ rehearse  65.0s  3 evicted, 1 refused
      s.yaml:3: drain did not complete in 1m0s
      surge: node group new +2 (new-0 new-1), Ready after 2.1s
      wave 1/2: old-0 old-1: 3 evicted, 1 refused for a while, 3.2s
        default/web-b refused by PDB web for 1.4s, then evicted
      wave 2/2: old-2: 0 evicted, 1 refused for a while, 60.0s
        default/solo refused by PDB solo for 59.0s, still refused at the end
      left Pending: 1
        default/legacy-x: 0/5 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 2 node(s) were unschedulable.
`
	if out.String() != want {
		t.Errorf("drain:\n%s\nwant:\n%s", out.String(), want)
	}
}

package report

import (
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// samplePlacement: zones a (n1 with two web pods) and b (n2, cordoned),
// a pending web pod and an evicted one.
func samplePlacement() *result.Placement {
	web := func(name, phase string) result.PodMark { return result.PodMark{Name: name, Workload: 0, Phase: phase} }
	return &result.Placement{
		Key: "topology.kubernetes.io/zone",
		Domains: []result.Domain{
			{Value: "a", Nodes: []result.NodeMark{{Name: "n1", Ready: true, Pods: []result.PodMark{web("w1", "Running"), web("w2", "Running")}}}},
			{Value: "b", Nodes: []result.NodeMark{{Name: "n2", Ready: true, Unschedulable: true}}},
		},
		Pending: []result.PodMark{web("p", "Pending")},
		Evicted: []result.PodMark{{Name: "default/gone", Workload: -1, Phase: "Evicted"}},
		Colors:  []result.WorkloadID{{Name: "web"}},
	}
}

// sampleResults: a scenario with a wait that passed and an assert with
// one assertion of two failing.
func sampleResults() []*result.Scenario {
	pl := samplePlacement()
	return []*result.Scenario{{Name: "s", File: "dir/s.yaml", Duration: 3 * time.Second, Steps: []*result.Step{
		{Name: "wait", Action: "wait", Check: true, Line: 5, Start: time.Second, Duration: time.Second, Detail: "pods (all) = 1", Placement: pl},
		{Name: "assert", Action: "assert", Line: 7, Start: 2 * time.Second, Detail: "1/2 passed", Placement: pl, Assertions: []result.Outcome{
			{Name: "ok", Passed: true}, {Name: "bad <one>", Expected: "1", Actual: "2"}}},
	}}}
}

// sampleDrain: a surge of two nodes, then two waves; the first evicts
// three pods, one of them after its budget refused it for 1.4s; in the
// second a pod is still refused at the end; one pod is left Pending.
func sampleDrain() *result.Drain {
	return &result.Drain{
		Planned: 2,
		Surge:   &result.Surge{NodeGroup: "new", Nodes: []string{"new-0", "new-1"}, Duration: 2100 * time.Millisecond},
		Waves: []result.Wave{
			{Nodes: []string{"old-0", "old-1"}, Evicted: []string{"default/web-a", "default/web-b", "default/db-0"}, Duration: 3200 * time.Millisecond,
				Refusals: []result.Refusal{{Pod: "default/web-b", PDB: "web", For: 1400 * time.Millisecond, Evicted: true, Message: "The disruption budget web needs 1 healthy pods and has 1 currently"}}},
			{Nodes: []string{"old-2"}, Duration: 60 * time.Second,
				Refusals: []result.Refusal{{Pod: "default/solo", PDB: "solo", For: 59 * time.Second, Message: "The disruption budget solo needs 1 healthy pods and has 1 currently"}}},
		},
		Pending: []result.PendingPod{{Pod: "default/legacy-x", Reason: "0/5 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 2 node(s) were unschedulable."}},
	}
}

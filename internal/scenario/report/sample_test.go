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

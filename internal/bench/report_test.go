package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestReportSetsPhasesAgainstTheirFloor checks the ratio line: a phase
// that names a floor phase measured for as many objects says how many
// times that floor it took; one without a floor, or whose floor was not
// measured, or was measured for other objects, says nothing of it.
func TestReportSetsPhasesAgainstTheirFloor(t *testing.T) {
	floor := []Phase{
		{Name: floorPodsCreated, Count: 100, Took: 2 * time.Second},
		{Name: floorPodsDeleted, Count: 100, Took: 4 * time.Second},
		{Name: floorNodesCreated, Count: 7, Took: time.Second},
	}
	phases := []Phase{
		{Name: "up", Count: 100, Took: 5 * time.Second, FloorOf: floorPodsCreated},
		{Name: "down", Count: 100, Took: 5 * time.Second, FloorOf: floorPodsDeleted},
		{Name: "held", Count: 100, Took: 9 * time.Second},
		{Name: "nodes", Count: 8, Took: 3 * time.Second, FloorOf: floorNodesCreated},
	}
	var out bytes.Buffer
	Report(&out, phases, floor)
	got := out.String()
	for _, want := range []string{
		"up: 100 in 5.00s (20/s)\n  2.50× the floor (floor: pods created (nothing else): 100 in 2.00s)\n",
		"down: 100 in 5.00s (20/s)\n  1.25× the floor (floor: pods deleted at once and gone: 100 in 4.00s)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "× the floor"); n != 2 {
		t.Errorf("%d ratio lines, want 2 (none for a phase without a floor, or for other counts):\n%s", n, got)
	}

	out.Reset()
	Report(&out, phases, nil)
	if strings.Contains(out.String(), "× the floor") {
		t.Errorf("a ratio with no floor measured:\n%s", out.String())
	}
}

// TestScenariosAskTheFloorForWhatTheyMeasure checks each scenario's floor
// size: the floor measures the objects its phases make, and nothing else.
func TestScenariosAskTheFloorForWhatTheyMeasure(t *testing.T) {
	s := Size{Nodes: 3, Pods: 12, Hold: time.Minute}
	for name, tc := range map[string]struct {
		scenario Scenario
		want     Size
	}{
		"nodes":      {NodesScenario, Size{Nodes: 3}},
		"pods":       {PodsScenario, Size{Pods: 12}},
		"deployment": {DeploymentScenario, Size{Nodes: 3, Pods: 12}},
		"scale":      {ScaleScenario, Size{Nodes: 3, Pods: 12}},
	} {
		if got := tc.scenario.FloorSize(s); got != tc.want {
			t.Errorf("%s: floor size %+v, want %+v", name, got, tc.want)
		}
	}
	if FloorScenario.FloorSize != nil {
		t.Errorf("the floor has a floor of its own")
	}
}

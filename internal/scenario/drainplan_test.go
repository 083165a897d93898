package scenario

import (
	"reflect"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func TestPlanDrainWaves(t *testing.T) {
	nodes := []string{"old-10", "old-2", "old-1", "old-0", "old-11", "old-3"}
	for _, tc := range []struct {
		name string
		max  int
		want [][]string
	}{
		{"all at once", 0, [][]string{{"old-0", "old-1", "old-2", "old-3", "old-10", "old-11"}}},
		{"two at a time, in natural order", 2, [][]string{{"old-0", "old-1"}, {"old-2", "old-3"}, {"old-10", "old-11"}}},
		{"a short last wave", 4, [][]string{{"old-0", "old-1", "old-2", "old-3"}, {"old-10", "old-11"}}},
		{"more than there are", 9, [][]string{{"old-0", "old-1", "old-2", "old-3", "old-10", "old-11"}}},
	} {
		p := planDrain(&v1alpha1.DrainStep{MaxUnavailable: tc.max}, nodes, nil, 0)
		if !reflect.DeepEqual(p.waves, tc.want) || p.surge != nil {
			t.Errorf("%s: waves %v, surge %v; want %v and none", tc.name, p.waves, p.surge, tc.want)
		}
	}
}

// The surge comes first, grows the group from the nodes it has, and
// never has its own nodes drained, even when the nodes picked name them.
func TestPlanDrainSurgesFirst(t *testing.T) {
	g := &v1alpha1.NodeGroup{Name: "new"}
	s := &v1alpha1.DrainStep{MaxUnavailable: 2, Surge: &v1alpha1.DrainSurge{NodeGroup: "new", Count: 2}}
	p := planDrain(s, []string{"old-1", "new-3", "old-0", "old-1", "new-0"}, g, 3)
	if p.surge != g || p.surgeFrom != 3 || p.surgeTo != 5 {
		t.Fatalf("surge %v from %d to %d; want new from 3 to 5", p.surge, p.surgeFrom, p.surgeTo)
	}
	if got := p.surgeNodes(); !reflect.DeepEqual(got, []string{"new-3", "new-4"}) {
		t.Errorf("surge nodes %v", got)
	}
	if want := [][]string{{"new-0", "old-0"}, {"old-1"}}; !reflect.DeepEqual(p.waves, want) {
		t.Errorf("waves %v, want %v (new-3 is the surge's, old-1 once)", p.waves, want)
	}
	unnamed := planDrain(&v1alpha1.DrainStep{Surge: &v1alpha1.DrainSurge{Count: 1}}, []string{"a"}, &v1alpha1.NodeGroup{}, 0)
	if got := unnamed.surgeNodes(); !reflect.DeepEqual(got, []string{"node-000000"}) {
		t.Errorf("the unnamed group's surge: %v", got)
	}
}

func TestNaturalCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"node-2", "node-10", -1}, {"node-10", "node-2", 1}, {"a-1-b-2", "a-1-b-10", -1},
		{"node-01", "node-1", -1}, {"zone", "zone-0", -1}, {"b", "a-9", 1}, {"x", "x", 0},
	} {
		if got := naturalCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

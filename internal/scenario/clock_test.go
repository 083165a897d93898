package scenario

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/scenario/result"
	"github.com/kubesim/kubesim/internal/version"
)

func scaledFile(path string, scales ...int32) *File {
	f := &File{Path: path, Scenario: &v1alpha1.Scenario{}}
	for _, s := range scales {
		f.Scenario.Clusters = append(f.Scenario.Clusters, v1alpha1.ScenarioCluster{ClusterSpec: v1alpha1.ClusterSpec{TimeScale: s}})
	}
	return f
}

func TestClockGroups(t *testing.T) {
	old := version.Clock
	version.Clock = "go/test.diff"
	t.Cleanup(func() { version.Clock = old })
	t.Setenv(clusterclock.ScaleEnv, "")

	if g, err := clockGroups([]*File{scaledFile("a", 0, 1)}, nil); err != nil || len(g) != 1 || g[0].clock != nil {
		t.Errorf("real-time scenarios: %+v, %v; want one group on real time", g, err)
	}
	g, err := clockGroups([]*File{scaledFile("a", 10, 10), scaledFile("b", 10)}, nil)
	if err != nil || len(g) != 1 || g[0].clock == nil || g[0].clock.Scale != 10 || len(g[0].files) != 2 {
		t.Fatalf("scenarios at 10: %+v, %v; want one 10× group of both", g, err)
	}
	c := g[0].clock
	// Scenarios on different clocks: a group each, in the order they come.
	mixed, err := clockGroups([]*File{scaledFile("a", 10), scaledFile("b", 1), scaledFile("c", 10), scaledFile("d", 60)}, nil)
	if err != nil || len(mixed) != 3 {
		t.Fatalf("mixed clocks: %+v, %v; want three groups", mixed, err)
	}
	for i, want := range [][]string{{"a", "c"}, {"b"}, {"d"}} {
		var got []string
		for _, f := range mixed[i].files {
			got = append(got, f.Path)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("group %d: %v, want %v", i, got, want)
		}
	}
	// One scenario's clusters must share a clock.
	if _, err := clockGroups([]*File{scaledFile("a", 10, 20)}, nil); err == nil || !strings.Contains(err.Error(), "timeScale") {
		t.Errorf("a scenario on two clocks: %v, want an error naming timeScale", err)
	}
	// Re-executed onto its clock, the run finds it again.
	for _, kv := range clusterclock.Env(c) {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	again, err := clockGroups([]*File{scaledFile("a", 10, 10), scaledFile("b", 10)}, nil)
	if err != nil || len(again) != 1 || !clusterclock.Same(again[0].clock, c) {
		t.Errorf("on its own clock, the run chose %+v (%v), want %+v", again, err, c)
	}
}

// The results a run of one clock's scenarios hands back survive the trip
// whole: the report drawn from them is the one that run would draw.
func TestResultsRoundTrip(t *testing.T) {
	metric := 42.5
	want := []*result.Scenario{{Name: "s", File: "a.yaml", Passed: false, Duration: 3 * time.Second, TimeScale: 10,
		Autoscalers: []*result.Autoscaler{{Name: "default/web", Metric: "cpu", Target: 50, MinReplicas: 2, MaxReplicas: 6,
			Samples: []result.AutoscalerSample{{At: time.Second, CurrentReplicas: 2, DesiredReplicas: 3, Metric: &metric}}}}}}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := writeResults(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results after the trip:\n%+v\nwant\n%+v", got[0], want[0])
	}
}

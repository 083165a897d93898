package scenario

import (
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/version"
)

func scaledFile(path string, scales ...int32) *File {
	f := &File{Path: path, Scenario: &v1alpha1.Scenario{}}
	for _, s := range scales {
		f.Scenario.Clusters = append(f.Scenario.Clusters, v1alpha1.ScenarioCluster{ClusterSpec: v1alpha1.ClusterSpec{TimeScale: s}})
	}
	return f
}

func TestRunClock(t *testing.T) {
	old := version.Clock
	version.Clock = "go/test.diff"
	t.Cleanup(func() { version.Clock = old })
	t.Setenv(clusterclock.ScaleEnv, "")

	if c, err := runClock([]*File{scaledFile("a", 0, 1)}, nil); c != nil || err != nil {
		t.Errorf("real-time scenarios: %v, %v; want real time", c, err)
	}
	c, err := runClock([]*File{scaledFile("a", 10, 10), scaledFile("b", 10)}, nil)
	if err != nil || c == nil || c.Scale != 10 {
		t.Fatalf("scenarios at 10: %+v, %v; want one 10× clock", c, err)
	}
	for _, files := range [][]*File{{scaledFile("a", 10, 20)}, {scaledFile("a", 10), scaledFile("b", 1)}} {
		if _, err := runClock(files, nil); err == nil || !strings.Contains(err.Error(), "timeScale") {
			t.Errorf("scenarios on two clocks: %v, want an error naming timeScale", err)
		}
	}
	// Re-executed onto its clock, the run finds it again.
	for _, kv := range clusterclock.Env(c) {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	again, err := runClock([]*File{scaledFile("a", 10, 10), scaledFile("b", 10)}, nil)
	if err != nil || !clusterclock.Same(again, c) {
		t.Errorf("on its own clock, the run chose %+v (%v), want %+v", again, err, c)
	}
}

package supervisor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kubesim/kubesim/internal/component"
)

// The table of a cluster, as the plan sees it: etcd and the API server
// barriers, two components started early (after etcd), two plain ones.
var planTable = []component.Component{
	{Name: "etcd", Barrier: true},
	{Name: "apiserver", Barrier: true},
	{Name: "kcm", StartAfter: "etcd"},
	{Name: "sched", StartAfter: "etcd"},
	{Name: "sim"},
	{Name: "dpdb", StartAfter: "gone"}, // a component the cluster does not run
}

func TestStartPlan(t *testing.T) {
	var got []string
	for _, step := range startPlan(planTable) {
		got = append(got, fmt.Sprintf("%s: start after %v, ready after %v", step.comp.Name, step.startAfter, step.readyAfter))
	}
	want := []string{
		"etcd: start after [], ready after []",
		"apiserver: start after [etcd], ready after [etcd]",
		"kcm: start after [etcd], ready after [apiserver]",
		"sched: start after [etcd], ready after [apiserver]",
		"sim: start after [apiserver], ready after [apiserver]",
		"dpdb: start after [apiserver], ready after [apiserver]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// runPlan keeps the plan's order: nothing starts before what it waits
// for is ready, the early ones start while the API server comes up, and
// the rest come up side by side (sim is ready before kcm, which waits).
func TestRunPlanOrder(t *testing.T) {
	var mu sync.Mutex
	var events []string
	record := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	kcmMayBeReady := make(chan struct{})
	readyAndSetUp := func(ctx context.Context, comp component.Component) bool {
		if comp.Name == "kcm" {
			<-kcmMayBeReady
		}
		record(comp.Name + " ready")
		if comp.Name == "sim" {
			close(kcmMayBeReady)
		}
		return true
	}
	if !runPlan(context.Background(), startPlan(planTable), func(c component.Component) { record("start " + c.Name) }, readyAndSetUp) {
		t.Fatal("runPlan: false")
	}
	at := func(e string) int {
		i := slices.Index(events, e)
		if i < 0 {
			t.Fatalf("no %q in %v", e, events)
		}
		return i
	}
	for _, before := range [][2]string{
		{"etcd ready", "start apiserver"}, {"etcd ready", "start kcm"}, {"apiserver ready", "start sim"},
		{"apiserver ready", "kcm ready"}, {"apiserver ready", "sched ready"}, {"sim ready", "kcm ready"},
	} {
		if at(before[0]) > at(before[1]) {
			t.Errorf("%q after %q: %v", before[0], before[1], events)
		}
	}
	if len(events) != 2*len(planTable) {
		t.Errorf("events %v: each component started and ready once", events)
	}
}

// A cluster stopped while it starts: runPlan gives up.
func TestRunPlanStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := func(ctx context.Context, comp component.Component) bool {
		if comp.Name == "apiserver" {
			cancel()
			return false
		}
		return true
	}
	if runPlan(ctx, startPlan(planTable), func(component.Component) {}, ready) {
		t.Error("runPlan: true after the cluster stopped")
	}
}

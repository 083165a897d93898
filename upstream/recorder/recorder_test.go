//go:build !kube_1_34 && !kube_1_35

package recorder

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/kubesim/kubesim/upstream/record"
)

// profile is a framework that answers as fixed plugins would: node "bad"
// is tainted, the others score as scores says.
type profile struct {
	framework.Framework // calls not overridden here panic
	scores              map[string][]fwk.PluginScore
	preFilterNodes      sets.Set[string]
}

func (p *profile) ProfileName() string { return "default-scheduler" }

func (p *profile) ListPlugins() *config.Plugins {
	return &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{{Name: "TaintToleration", Weight: 3}, {Name: "NodeResourcesFit", Weight: 1}}}}
}

func (p *profile) RunPreFilterPlugins(context.Context, fwk.CycleState, *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string]) {
	if p.preFilterNodes != nil {
		return &fwk.PreFilterResult{NodeNames: p.preFilterNodes}, nil, sets.New("NodeAffinity")
	}
	return nil, nil, nil
}

func (p *profile) RunFilterPluginsWithNominatedPods(_ context.Context, _ fwk.CycleState, _ *v1.Pod, n fwk.NodeInfo) *fwk.Status {
	if n.Node().Name == "bad" {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)").WithPlugin("TaintToleration")
	}
	return nil
}

func (p *profile) RunScorePlugins(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	var out []fwk.NodePluginScores
	for _, n := range nodes {
		s := fwk.NodePluginScores{Name: n.Node().Name, Scores: p.scores[n.Node().Name]}
		for _, ps := range s.Scores {
			s.TotalScore += ps.Score
		}
		out = append(out, s)
	}
	return out, nil
}

func nodeInfo(name string) fwk.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return ni
}

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: "uid-" + "name"}}
}

// schedule stands for the scheduler's schedulePod: it asks the framework
// what upstream's does, in the same order, and picks the best total.
func schedule(nodes ...string) func(context.Context, framework.Framework, fwk.CycleState, *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
	infos := make([]fwk.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = nodeInfo(n)
	}
	return func(ctx context.Context, f framework.Framework, state fwk.CycleState, pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		pre, _, _ := f.RunPreFilterPlugins(ctx, state, pi.Pod)
		var feasible []fwk.NodeInfo
		for _, n := range infos {
			if !pre.AllNodes() && !pre.NodeNames.Has(n.Node().Name) {
				continue
			}
			if f.RunFilterPluginsWithNominatedPods(ctx, state, pi.Pod, n).IsSuccess() {
				feasible = append(feasible, n)
			}
		}
		if len(feasible) == 0 {
			return scheduler.ScheduleResult{}, &framework.FitError{Pod: pi.Pod, NumAllNodes: len(nodes), Diagnosis: framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}}
		}
		scores, _ := f.RunScorePlugins(ctx, state, pi.Pod, feasible)
		best := scores[0]
		for _, s := range scores {
			if s.TotalScore > best.TotalScore {
				best = s
			}
		}
		return scheduler.ScheduleResult{SuggestedHost: best.Name}, nil
	}
}

func install(r *Recorder, nodes ...string) *scheduler.Scheduler {
	s := &scheduler.Scheduler{
		SchedulePod: schedule(nodes...),
		FailureHandler: func(context.Context, framework.Framework, *framework.QueuedPodInfo, *fwk.Status, *fwk.NominatingInfo, time.Time) {
		},
	}
	r.Install(s)
	return s
}

func scores(taint, fit int64) []fwk.PluginScore {
	return []fwk.PluginScore{{Name: "TaintToleration", Score: taint * 3}, {Name: "NodeResourcesFit", Score: fit}}
}

func TestRecordsFiltersAndScores(t *testing.T) {
	r := New(10)
	s := install(r, "a", "b", "bad", "c")
	p := &profile{scores: map[string][]fwk.PluginScore{"a": scores(100, 50), "b": scores(100, 90), "c": scores(0, 99)}}
	pi := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod("web")}}
	if _, err := s.SchedulePod(context.Background(), p, framework.NewCycleState(), pi); err != nil {
		t.Fatal(err)
	}
	e, ok := r.Explain("default", "web", []string{"a", "b", "bad", "c", "late"})
	if !ok {
		t.Fatal("no record")
	}
	if e.Result != record.Scheduled || e.Node != "b" {
		t.Fatalf("result %s on %q, want Scheduled on b", e.Result, e.Node)
	}
	var order []string
	for _, n := range e.Nodes {
		order = append(order, n.Name+":"+n.Filter)
	}
	want := []string{"b:Passed", "a:Passed", "c:Passed", "bad:Rejected", "late:NotEvaluated"}
	if !equal(order, want) {
		t.Errorf("nodes %v, want %v", order, want)
	}
	b := e.Nodes[0]
	if *b.Total != 390 || b.Scores[0] != (record.PluginScore{Plugin: "TaintToleration", Normalized: 100, Weighted: 300}) {
		t.Errorf("b: total %d, scores %+v; want 390 with TaintToleration 100×3", *b.Total, b.Scores)
	}
	if bad := e.Nodes[3]; bad.Plugin != "TaintToleration" || bad.Reasons[0] != "node(s) had untolerated taint(s)" {
		t.Errorf("bad: %+v", bad)
	}
}

func TestRecordsPreFilterAndFailure(t *testing.T) {
	r := New(10)
	s := install(r, "a", "bad", "c")
	p := &profile{preFilterNodes: sets.New("bad")}
	pi := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod("pending")}}
	_, err := s.SchedulePod(context.Background(), p, framework.NewCycleState(), pi)
	if !errors.As(err, new(*framework.FitError)) {
		t.Fatalf("err %v, want a FitError", err)
	}
	s.FailureHandler(context.Background(), p, pi, fwk.NewStatus(fwk.Unschedulable, "0/3 nodes are available; preemption: not helpful"),
		&fwk.NominatingInfo{NominatedNodeName: "c"}, time.Now())
	e, _ := r.Explain("default", "pending", []string{"a", "bad", "c"})
	if e.Result != record.Unschedulable || e.NominatedNode != "c" || e.Message != "0/3 nodes are available; preemption: not helpful" {
		t.Errorf("result %s, nominated %q, message %q", e.Result, e.NominatedNode, e.Message)
	}
	for _, n := range e.Nodes {
		want := record.RejectedAtPreFilter
		if n.Name == "bad" {
			want = record.Rejected
		}
		if n.Filter != want || n.Plugin == "" {
			t.Errorf("node %s: %s by %q, want %s with its plugin", n.Name, n.Filter, n.Plugin, want)
		}
	}
}

func TestKeepsTheLastPods(t *testing.T) {
	r := New(2)
	s := install(r, "a")
	p := &profile{scores: map[string][]fwk.PluginScore{"a": scores(0, 0)}}
	for _, name := range []string{"one", "two", "one", "three"} {
		pi := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod(name)}}
		if _, err := s.SchedulePod(context.Background(), p, framework.NewCycleState(), pi); err != nil {
			t.Fatal(err)
		}
	}
	for name, kept := range map[string]bool{"one": true, "two": false, "three": true} {
		if _, ok := r.Explain("default", name, nil); ok != kept {
			t.Errorf("pod %s kept: %v, want %v", name, ok, kept)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkAttempt is one pod's attempt over 1,000 nodes (every one
// filtered, 420 scored by 8 plugins, as upstream's defaults do there),
// with the recorder installed and without: the difference is what
// recording adds to each pod.
func BenchmarkAttempt(b *testing.B) {
	nodes := make([]string, 1000)
	p := &profile{scores: map[string][]fwk.PluginScore{}}
	for i := range nodes {
		nodes[i] = fmt.Sprintf("node-%06d", i)
		if i < 420 {
			p.scores[nodes[i]] = []fwk.PluginScore{{Name: "A", Score: 1}, {Name: "B", Score: 2}, {Name: "C"}, {Name: "D"}, {Name: "E"}, {Name: "F"}, {Name: "G"}, {Name: "H"}}
		}
	}
	for _, recording := range []bool{false, true} {
		b.Run(fmt.Sprintf("recording=%v", recording), func(b *testing.B) {
			s := &scheduler.Scheduler{SchedulePod: schedule(nodes...)}
			if recording {
				New(1000).Install(s)
			}
			for i := 0; b.Loop(); i++ {
				pi := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod(fmt.Sprint("p", i))}}
				if _, err := s.SchedulePod(context.Background(), p, framework.NewCycleState(), pi); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Nodes of equal total are listed in the order the scheduler scored them,
// by which v1.36's scheduler breaks the tie, not by name.
func TestTiedNodesKeepTheSchedulersOrder(t *testing.T) {
	r := New(10)
	s := install(r, "z", "y", "x")
	p := &profile{scores: map[string][]fwk.PluginScore{"z": scores(100, 50), "y": scores(100, 50), "x": scores(100, 50)}}
	pi := &framework.QueuedPodInfo{PodInfo: &framework.PodInfo{Pod: pod("tie")}}
	if _, err := s.SchedulePod(context.Background(), p, framework.NewCycleState(), pi); err != nil {
		t.Fatal(err)
	}
	e, ok := r.Explain("default", "tie", []string{"x", "y", "z"})
	if !ok {
		t.Fatal("no record")
	}
	var order []string
	for _, n := range e.Nodes {
		order = append(order, n.Name)
	}
	if want := []string{"z", "y", "x"}; !equal(order, want) {
		t.Errorf("nodes %v, want the scheduler's order %v", order, want)
	}
}

// Package recorder runs inside kube-scheduler: it records each pod's last
// scheduling attempt as the scheduler makes it and serves the records to
// `kubesim explain` (package explain).
package recorder

import (
	"container/list"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/kubesim/kubesim/upstream/record"
)

// Recorder keeps the last scheduling attempt of the most recently
// attempted pods, at most Max of them, oldest dropped first.
type Recorder struct {
	max int

	mu     sync.Mutex
	order  *list.List               // of *attempt, most recent first
	byName map[string]*list.Element // namespace/name → its element

	weights sync.Map // profile name → map[plugin]weight
	// passedHint sizes an attempt's list of feasible nodes as the last
	// one's, so the list seldom grows on the filters' hot path.
	passedHint atomic.Int64
}

// New keeps the last attempt of up to max pods.
func New(max int) *Recorder {
	return &Recorder{max: max, order: list.New(), byName: map[string]*list.Element{}}
}

func (r *Recorder) begin(f framework.Framework, pod *v1.Pod) *attempt {
	return &attempt{
		namespace: pod.Namespace, name: pod.Name, uid: pod.UID,
		profile:   f.ProfileName(),
		weights:   r.profileWeights(f),
		attempted: time.Now(),
		hint:      pod.Status.NominatedNodeName,
		passed:    make([]string, 0, r.passedHint.Load()),
	}
}

// profileWeights are the score plugins' weights of f's profile, read once:
// ListPlugins walks the framework by reflection.
func (r *Recorder) profileWeights(f framework.Framework) map[string]int64 {
	if w, ok := r.weights.Load(f.ProfileName()); ok {
		return w.(map[string]int64)
	}
	w := map[string]int64{}
	if plugins := f.ListPlugins(); plugins != nil {
		for _, p := range plugins.Score.Enabled {
			w[p.Name] = int64(p.Weight)
		}
	}
	r.weights.Store(f.ProfileName(), w)
	return w
}

// keep makes a the pod's last attempt, dropping the oldest pod's beyond max.
func (r *Recorder) keep(a *attempt) {
	key := a.namespace + "/" + a.name
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byName[key]; ok {
		r.order.Remove(e)
	}
	r.byName[key] = r.order.PushFront(a)
	for r.order.Len() > r.max {
		oldest := r.order.Remove(r.order.Back()).(*attempt)
		delete(r.byName, oldest.namespace+"/"+oldest.name)
	}
}

// failed adds what the scheduler concluded from a failed attempt — its
// message, preemption's verdict included — to the pod's record.
func (r *Recorder) failed(pod *v1.Pod, status *fwk.Status, nominating *nominatingInfo) {
	a := r.last(pod.Namespace, pod.Name)
	if a == nil || a.uid != pod.UID {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.result == record.Scheduled {
		// Scheduled, then failed later in the cycle (reserve, permit, bind).
		a.result = record.Error
	}
	a.message = status.Message()
	if nominating != nil {
		a.nominated = nominating.NominatedNodeName
	}
}

func (r *Recorder) last(namespace, name string) *attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byName[namespace+"/"+name]; ok {
		return e.Value.(*attempt)
	}
	return nil
}

// Explain returns the pod's last recorded attempt, its nodes completed
// with the nodes of the cluster it did not evaluate; false if none is kept.
func (r *Recorder) Explain(namespace, name string, allNodes []string) (record.Explanation, bool) {
	a := r.last(namespace, name)
	if a == nil {
		return record.Explanation{}, false
	}
	return a.explanation(allNodes), true
}

// recordingFramework is the framework of one attempt: the profile's own,
// recording what the scheduler asks of it and what it answers.
type recordingFramework struct {
	framework.Framework
	a *attempt
}

func (f *recordingFramework) RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*preFilterResult, *fwk.Status, sets.Set[string]) {
	result, status, plugins := f.Framework.RunPreFilterPlugins(ctx, state, pod)
	f.a.preFiltered(result, status, plugins)
	return result, status, plugins
}

func (f *recordingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node fwk.NodeInfo) *fwk.Status {
	status := f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, node)
	f.a.filtered(node.Node().Name, status)
	return status
}

func (f *recordingFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]nodePluginScores, *fwk.Status) {
	scores, status := f.Framework.RunScorePlugins(ctx, state, pod, nodes)
	if status.IsSuccess() {
		f.a.scored(scores)
	}
	return scores, status
}

// attempt is one pod's scheduling attempt, stored compactly: the node
// names are the scheduler's own strings; a feasible node that was scored
// is kept once, in the score table.
type attempt struct {
	namespace, name string
	uid             types.UID
	profile         string
	weights         map[string]int64
	attempted       time.Time

	mu               sync.Mutex // filters run on many goroutines at once
	hint             string
	preFilter        *fwk.Status
	preFilterPlugins []string
	preFilterNodes   []string // nil: PreFilter left every node
	rejected         []verdict
	passed           []string // until finish: then only those not scored
	scorePlugins     []string
	scoredNodes      []string
	scores           []int32 // weighted, len(scoredNodes) × len(scorePlugins)

	result, node, message, nominated string
}

type verdict struct {
	node   string
	status *fwk.Status
}

func (a *attempt) preFiltered(result *preFilterResult, status *fwk.Status, plugins sets.Set[string]) {
	if status.IsSuccess() && result.AllNodes() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !status.IsSuccess() {
		a.preFilter = status
	}
	a.preFilterPlugins = sets.List(plugins)
	if !result.AllNodes() {
		a.preFilterNodes = sets.List(result.NodeNames)
	}
}

func (a *attempt) filtered(node string, status *fwk.Status) {
	a.mu.Lock()
	if status.IsSuccess() {
		a.passed = append(a.passed, node)
	} else {
		a.rejected = append(a.rejected, verdict{node, status})
	}
	a.mu.Unlock()
}

func (a *attempt) scored(scores []nodePluginScores) {
	if len(scores) == 0 {
		return
	}
	plugins := make([]string, len(scores[0].Scores))
	for i, s := range scores[0].Scores {
		plugins[i] = s.Name
	}
	nodes := make([]string, len(scores))
	table := make([]int32, 0, len(scores)*len(plugins))
	for i, n := range scores {
		nodes[i] = n.Name
		for _, s := range n.Scores {
			table = append(table, int32(min(s.Score, math.MaxInt32))) // 100 × weight
		}
	}
	a.mu.Lock()
	a.scorePlugins, a.scoredNodes, a.scores = plugins, nodes, table
	a.mu.Unlock()
}

func (a *attempt) finish(node string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropScoredFromPassed()
	switch {
	case err == nil:
		a.result, a.node = record.Scheduled, node
	case isFitError(err):
		// Its message comes with preemption's verdict to failed().
		a.result = record.Unschedulable
	default:
		a.result, a.message = record.Error, err.Error()
	}
}

// dropScoredFromPassed keeps in passed only the feasible nodes that were
// not scored: those found beyond percentageOfNodesToScore's share, or the
// one feasible node, which the scheduler takes unscored.
func (a *attempt) dropScoredFromPassed() {
	if len(a.passed) <= len(a.scoredNodes) {
		if len(a.scoredNodes) > 0 {
			a.passed = nil
		}
		return
	}
	scored := sets.New(a.scoredNodes...)
	var extra []string
	for _, n := range a.passed {
		if !scored.Has(n) {
			extra = append(extra, n)
		}
	}
	a.passed = extra
}

func isFitError(err error) bool {
	_, ok := err.(*framework.FitError)
	return ok || err == scheduler.ErrNoNodesAvailable
}

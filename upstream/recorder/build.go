package recorder

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/upstream/record"
)

// explanation turns the compact record into its full form. allNodes are
// the cluster's nodes now: those the attempt never looked at are listed
// as NotEvaluated (or as PreFilter's rejects).
func (a *attempt) explanation(allNodes []string) record.Explanation {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := record.Explanation{
		Namespace: a.namespace, Name: a.name, UID: string(a.uid),
		Profile: a.profile, Attempted: a.attempted,
		Result: a.result, Node: a.node, Message: a.message,
		NodeHint: a.hint, NominatedNode: a.nominated,
	}
	if a.preFilter != nil || a.preFilterNodes != nil {
		e.PreFilter = &record.PreFilter{Plugins: a.preFilterPlugins, Nodes: a.preFilterNodes}
		if a.preFilter != nil {
			e.PreFilter.Reasons = a.preFilter.Reasons()
		}
	}
	for _, p := range a.scorePlugins {
		e.ScorePlugins = append(e.ScorePlugins, record.ScorePlugin{Name: p, Weight: a.weights[p]})
	}

	seen := make(map[string]bool, len(a.rejected)+len(a.scoredNodes)+len(a.passed))
	for _, v := range a.rejected {
		seen[v.node] = true
		e.Nodes = append(e.Nodes, record.NodeResult{Name: v.node, Filter: record.Rejected, Plugin: v.status.Plugin(), Reasons: v.status.Reasons()})
	}
	for i, name := range a.scoredNodes {
		seen[name] = true
		n := record.NodeResult{Name: name, Filter: record.Passed}
		n.Scores, n.Total = a.nodeScores(i)
		e.Nodes = append(e.Nodes, n)
	}
	for _, name := range a.passed {
		seen[name] = true
		e.Nodes = append(e.Nodes, record.NodeResult{Name: name, Filter: record.Passed})
	}
	inPreFilterSet := map[string]bool{}
	for _, n := range a.preFilterNodes {
		inPreFilterSet[n] = true
	}
	for _, name := range allNodes {
		if seen[name] {
			continue
		}
		n := record.NodeResult{Name: name, Filter: record.NotEvaluated}
		switch {
		case a.preFilter != nil:
			n.Filter, n.Plugin, n.Reasons = record.RejectedAtPreFilter, a.preFilter.Plugin(), a.preFilter.Reasons()
		case a.preFilterNodes != nil && !inPreFilterSet[name]:
			n.Filter, n.Plugin = record.RejectedAtPreFilter, strings.Join(a.preFilterPlugins, ",")
			n.Reasons = []string{"not among the nodes PreFilter left to evaluate"}
		}
		e.Nodes = append(e.Nodes, n)
	}
	slices.SortStableFunc(e.Nodes, func(x, y record.NodeResult) int { return compareNodes(e.Node, x, y) })
	return e
}

// nodeScores are the i-th scored node's scores, each plugin's normalised
// score recovered from the weighted one (weighted = normalised × weight).
func (a *attempt) nodeScores(i int) ([]record.PluginScore, *int64) {
	row := a.scores[i*len(a.scorePlugins) : (i+1)*len(a.scorePlugins)]
	scores := make([]record.PluginScore, len(row))
	var total int64
	for j, w32 := range row {
		weighted := int64(w32)
		normalized := weighted
		if w := a.weights[a.scorePlugins[j]]; w > 0 {
			normalized = weighted / w
		}
		scores[j] = record.PluginScore{Plugin: a.scorePlugins[j], Normalized: normalized, Weighted: weighted}
		total += weighted
	}
	return scores, &total
}

// filterRank orders verdicts: feasible first, never evaluated last.
var filterRank = map[string]int{record.Passed: 0, record.Rejected: 1, record.RejectedAtPreFilter: 2, record.NotEvaluated: 3}

// compareNodes puts the chosen node first, then the scored nodes by total
// (best first; equal totals in the order the scheduler scored them, which
// is how it breaks ties), then the other feasible ones, the rejected ones
// by plugin, and the nodes not evaluated; names break the other ties.
func compareNodes(chosen string, x, y record.NodeResult) int {
	if (x.Name == chosen) != (y.Name == chosen) {
		if x.Name == chosen {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(filterRank[x.Filter], filterRank[y.Filter]); c != 0 {
		return c
	}
	if (x.Total != nil) != (y.Total != nil) {
		if x.Total != nil {
			return -1
		}
		return 1
	}
	if x.Total != nil {
		return cmp.Compare(*y.Total, *x.Total) // a stable sort keeps the scheduler's order
	}
	if c := cmp.Compare(x.Plugin, y.Plugin); c != 0 {
		return c
	}
	return cmp.Compare(x.Name, y.Name)
}

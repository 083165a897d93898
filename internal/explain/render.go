package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// DefaultRows is how many nodes a table shows without --all.
const DefaultRows = 15

// Counts are how many nodes got each verdict.
func (e *Explanation) Counts() map[string]int {
	c := map[string]int{}
	for _, n := range e.Nodes {
		c[n.Filter]++
	}
	return c
}

// Find returns the named node's result.
func (e *Explanation) Find(node string) (NodeResult, bool) {
	for _, n := range e.Nodes {
		if n.Name == node {
			return n, true
		}
	}
	return NodeResult{}, false
}

// Decision is why the chosen node beat the runner-up: the score plugin
// that favoured it most, by how much; or, with a Margin of 0, the nodes
// that tied with it.
type Decision struct {
	RunnerUp string
	Plugin   string
	Margin   int64 // total of the chosen minus the runner-up's
	Lead     int64 // Plugin's weighted score of the chosen minus the runner-up's
	// Tied are the other scored nodes whose total is the chosen node's,
	// in the order the scheduler scored them.
	Tied []string
}

// TieBreak is how the scheduler of this release (Kubernetes v1.36)
// chooses among nodes of equal score: it sorts its scores in a heap whose
// random tie-breaker is drawn only when scheduler extenders are configured
// (kubesim configures none), so the order it scored the nodes in, which
// starts where the previous pod's search stopped, decides.
const TieBreak = "this release's scheduler breaks ties by the order it scored the nodes in, not at random (it draws a random tie-breaker only when extenders are configured)"

// Decided returns the decision when the chosen node was scored against
// another; a Margin of 0 means a tie (Tied).
func (e *Explanation) Decided() (Decision, bool) {
	var scored []NodeResult
	for _, n := range e.Nodes {
		if n.Total != nil {
			scored = append(scored, n)
		}
	}
	if e.Result != Scheduled || len(scored) < 2 || scored[0].Name != e.Node {
		return Decision{}, false
	}
	chosen, runnerUp := scored[0], scored[1]
	d := Decision{RunnerUp: runnerUp.Name, Margin: *chosen.Total - *runnerUp.Total}
	if d.Margin == 0 {
		for _, n := range e.Nodes {
			if n.Name != e.Node && n.Total != nil && *n.Total == *chosen.Total {
				d.Tied = append(d.Tied, n.Name)
			}
		}
	}
	for i, s := range chosen.Scores {
		if i < len(runnerUp.Scores) {
			if lead := s.Weighted - runnerUp.Scores[i].Weighted; lead > d.Lead {
				d.Plugin, d.Lead = s.Plugin, lead
			}
		}
	}
	return d, true
}

// DecidedText says why the chosen node won, as explain pod prints it
// (a tie as the scheduler broke it); "" if it was not scored against
// another.
func (e *Explanation) DecidedText() string {
	d, ok := e.Decided()
	switch {
	case !ok:
		return ""
	case d.Margin == 0:
		return fmt.Sprintf("Decided: a tie at %d points with %s (in the order scored); %s", *e.Nodes[0].Total, strings.Join(d.Tied, ", "), TieBreak)
	}
	return fmt.Sprintf("Decided: %d points ahead of %s, most from %s (+%d)", d.Margin, d.RunnerUp, d.Plugin, d.Lead)
}

// PrintPod writes an explanation for a person: a summary, then a table of
// nodes (the chosen node and runners-up first, at most rows unless
// rows < 0), with a column for each score plugin whose scores differ.
func PrintPod(w io.Writer, e *Explanation, rows int) error {
	if e.Result == BoundDirectly {
		_, err := fmt.Fprintf(w, "Pod %s/%s is on %s, bound directly: %s, so there is no scheduling attempt to explain.\n", e.Namespace, e.Name, e.Node, e.Message)
		return err
	}
	printSummary(w, e)
	plugins := varyingPlugins(e)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "NODE\tFILTER\tTOTAL")
	for _, p := range plugins {
		fmt.Fprintf(tw, "\t%s", p)
	}
	fmt.Fprintln(tw, "\tREASON")
	shown := e.Nodes
	if rows >= 0 && len(shown) > rows {
		shown = shown[:rows]
	}
	for _, n := range shown {
		printRow(tw, e, n, plugins)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(shown) < len(e.Nodes) {
		fmt.Fprintf(w, "… %d more nodes (--all shows every node, -o json everything)\n", len(e.Nodes)-len(shown))
	}
	if e.Karpenter != nil {
		return printKarpenterPod(w, e.Karpenter)
	}
	return nil
}

func printSummary(w io.Writer, e *Explanation) {
	fmt.Fprintf(w, "Pod %s/%s, profile %s, attempted %s\n", e.Namespace, e.Name, e.Profile, e.Attempted.Local().Format(time.DateTime))
	switch e.Result {
	case Scheduled:
		fmt.Fprintf(w, "Scheduled on %s\n", e.Node)
	default:
		fmt.Fprintf(w, "%s: %s\n", e.Result, e.Message)
	}
	c := e.Counts()
	fmt.Fprintf(w, "Nodes: %d feasible, %d rejected by filters, %d by prefilters, %d not evaluated", c[Passed], c[Rejected], c[RejectedAtPreFilter], c[NotEvaluated])
	if e.NodeHint != "" {
		fmt.Fprintf(w, " (%s was tried first, as a nominated or batch-hinted node)", e.NodeHint)
	} else if c[NotEvaluated] > 0 {
		fmt.Fprint(w, " (enough feasible nodes were found first: percentageOfNodesToScore)")
	}
	fmt.Fprintln(w)
	if decided := e.DecidedText(); decided != "" {
		fmt.Fprintln(w, decided)
	}
	if e.NominatedNode != "" {
		fmt.Fprintf(w, "Preemption nominated %s\n", e.NominatedNode)
	}
	if len(e.ScorePlugins) > 0 {
		var ws []string
		for _, p := range e.ScorePlugins {
			ws = append(ws, fmt.Sprintf("%s×%d", p.Name, p.Weight))
		}
		fmt.Fprintf(w, "Score plugins (weight): %s; a column shows weighted scores where nodes differ\n", strings.Join(ws, ", "))
	}
	fmt.Fprintln(w)
}

func printRow(tw io.Writer, e *Explanation, n NodeResult, plugins []string) {
	name := n.Name
	if name == e.Node {
		name += " *"
	}
	total := "-"
	if n.Total != nil {
		total = fmt.Sprint(*n.Total)
	}
	fmt.Fprintf(tw, "%s\t%s\t%s", name, n.Filter, total)
	scores := map[string]int64{}
	for _, s := range n.Scores {
		scores[s.Plugin] = s.Weighted
	}
	for _, p := range plugins {
		if s, ok := scores[p]; ok {
			fmt.Fprintf(tw, "\t%d", s)
		} else {
			fmt.Fprint(tw, "\t-")
		}
	}
	fmt.Fprintf(tw, "\t%s\n", reason(n))
}

func reason(n NodeResult) string {
	switch {
	case n.Plugin != "":
		return n.Plugin + ": " + strings.Join(n.Reasons, "; ")
	case n.Filter == Passed && n.Total == nil:
		return "feasible, not scored"
	}
	return ""
}

// varyingPlugins are the score plugins whose scores differ between nodes:
// a plugin that scores every node alike decided nothing.
func varyingPlugins(e *Explanation) []string {
	seen := map[string]map[int64]bool{}
	for _, n := range e.Nodes {
		for _, s := range n.Scores {
			if seen[s.Plugin] == nil {
				seen[s.Plugin] = map[int64]bool{}
			}
			seen[s.Plugin][s.Weighted] = true
		}
	}
	var out []string
	for _, p := range e.ScorePlugins {
		if len(seen[p.Name]) > 1 {
			out = append(out, p.Name)
		}
	}
	return out
}

// PrintNode writes why the pod did or did not land on one node.
func PrintNode(w io.Writer, e *Explanation, node string) error {
	n, ok := e.Find(node)
	if !ok {
		return fmt.Errorf("--node: no node %q in the cluster or in the attempt", node)
	}
	printSummary(w, e)
	switch {
	case n.Name == e.Node:
		fmt.Fprintf(w, "%s is the node chosen.\n", node)
	case n.Filter == NotEvaluated && e.NodeHint != "":
		fmt.Fprintf(w, "%s was not evaluated: %s was tried first and fitted.\n", node, e.NodeHint)
	case n.Filter == NotEvaluated:
		fmt.Fprintf(w, "%s was not evaluated: the scheduler had found enough feasible nodes (percentageOfNodesToScore).\n", node)
	case n.Filter != Passed:
		fmt.Fprintf(w, "%s was ruled out (%s) by %s: %s\n", node, n.Filter, n.Plugin, strings.Join(n.Reasons, "; "))
		return nil
	case n.Total == nil:
		fmt.Fprintf(w, "%s was feasible but not scored.\n", node)
	default:
		fmt.Fprintf(w, "%s was feasible and scored %d.\n", node, *n.Total)
	}
	if n.Total == nil {
		return nil
	}
	chosen, _ := e.Find(e.Node)
	theirs := map[string]int64{}
	for _, s := range chosen.Scores {
		theirs[s.Plugin] = s.Weighted
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nPLUGIN\tNORMALIZED\tWEIGHTED\t%s (CHOSEN)\n", e.Node)
	for _, s := range n.Scores {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", s.Plugin, s.Normalized, s.Weighted, theirs[s.Plugin])
	}
	fmt.Fprintf(tw, "TOTAL\t\t%d\t%s\n", *n.Total, totalOf(chosen))
	return tw.Flush()
}

func totalOf(n NodeResult) string {
	if n.Total == nil {
		return "-"
	}
	return fmt.Sprint(*n.Total)
}

// PrintWorkload writes one line per pod — where it went, what ruled nodes
// out and what decided — then which plugins decided across the pods.
func PrintWorkload(w io.Writer, explanations []*Explanation, missing map[string]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tRESULT\tNODE\tFEASIBLE\tREJECTED BY\tDECIDED BY")
	rejectedBy, decidedBy := map[string]int{}, map[string]int{}
	for _, e := range explanations {
		perPlugin := map[string]int{}
		for _, n := range e.Nodes {
			if n.Plugin != "" {
				perPlugin[n.Plugin]++
				rejectedBy[n.Plugin]++
			}
		}
		decided := "-"
		if d, ok := e.Decided(); ok {
			decided = fmt.Sprintf("tie of %d, node order", len(d.Tied)+1)
			if d.Margin > 0 {
				decided = fmt.Sprintf("%s (+%d)", d.Plugin, d.Lead)
				decidedBy[d.Plugin]++
			}
		} else if e.NodeHint != "" && e.Result == Scheduled {
			decided = "hint: " + e.NodeHint
		}
		node := e.Node
		if node == "" {
			node = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", e.Name, e.Result, node, e.Counts()[Passed], len(e.Nodes), countList(perPlugin), decided)
	}
	for _, name := range slices.Sorted(maps.Keys(missing)) {
		fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t%s\n", name, missing[name])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nNodes rejected, by plugin: %s\n", countList(rejectedBy))
	fmt.Fprintf(w, "Pods decided, by score plugin: %s\n", countList(decidedBy))
	return nil
}

func countList(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

package result

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Fleet is what a cluster's nodes and Pending pods did over a run, as its
// watches saw them change: the report's charts of nodes per NodePool,
// Pending pods and cost, its table of node-hours, cost and disruptions,
// and how long pods waited to run. Times are since the scenario began,
// in the cluster's time.
type Fleet struct {
	Cluster string `json:"cluster,omitempty"` // with several clusters
	// Elastic says the cluster has a node autoscaler (or nodes a NodePool
	// launched): the report shows its fleet only then.
	Elastic bool `json:"elastic,omitempty"`
	// From and To are the span the report shows: the first step's start
	// and the run's end.
	From  time.Duration `json:"from"`
	To    time.Duration `json:"to"`
	Nodes []NodeLife    `json:"nodes"`
	// Pending is how many pods were Pending, at each change.
	Pending []Count `json:"pending,omitempty"`
	// Startup is how long each pod first seen Pending took to run: from
	// when it was first seen to when it was first seen Running.
	Startup []time.Duration `json:"startup,omitempty"`
}

// NodeLife is one node from when it was first seen until it was gone.
type NodeLife struct {
	Name         string        `json:"name"`
	NodePool     string        `json:"nodePool,omitempty"` // "" for a node no NodePool launched
	InstanceType string        `json:"instanceType,omitempty"`
	PricePerHour float64       `json:"pricePerHour,omitempty"`
	Priced       bool          `json:"priced,omitempty"` // it carries a price (0 may be one)
	Added        time.Duration `json:"added"`
	// Gone is when it was deleted; nil while it is still there.
	Gone *time.Duration `json:"gone,omitempty"`
	// Disrupting are the spans it was being disrupted: tainted
	// karpenter.sh/disrupted, or deleting.
	Disrupting []Span `json:"disrupting,omitempty"`
	// Reason is why Karpenter disrupted it, as its NodeClaim said
	// (DisruptionReason: Empty, Underutilized, Drifted…), if it did.
	Reason string `json:"reason,omitempty"`
	// Labels are its labels as last seen, for the assertions' selectors.
	Labels map[string]string `json:"-"`
}

// Span is a stretch of time; To nil: until the end.
type Span struct {
	From time.Duration  `json:"from"`
	To   *time.Duration `json:"to,omitempty"`
}

// Count is a number at a moment; it holds until the next.
type Count struct {
	At time.Duration `json:"at"`
	N  int           `json:"n"`
}

// end is when a span (or a life) ends, at most to.
func end(gone *time.Duration, to time.Duration) time.Duration {
	if gone == nil || *gone > to {
		return to
	}
	return *gone
}

// Lifetime is the node's span of existence.
func (n *NodeLife) Lifetime() Span { return Span{From: n.Added, To: n.Gone} }

// Peak is the most of the spans that overlap at any moment of [from, to],
// the first moment that many do, and the indices of those spans then. A
// span that ends as another starts does not overlap it.
func Peak(spans []Span, from, to time.Duration) (most int, at time.Duration, which []int) {
	type edge struct {
		t     time.Duration
		delta int
		i     int
	}
	var edges []edge
	for i, s := range spans {
		a := max(s.From, from)
		if a > to || (s.To != nil && *s.To <= a) {
			continue // outside the window
		}
		edges = append(edges, edge{a, 1, i})
		if s.To != nil && *s.To <= to {
			edges = append(edges, edge{*s.To, -1, i})
		}
	}
	// Ends before starts at the same moment.
	sort.SliceStable(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].delta < edges[j].delta
	})
	open := map[int]bool{}
	at = from
	for _, e := range edges {
		if e.delta > 0 {
			open[e.i] = true
		} else {
			delete(open, e.i)
		}
		if len(open) > most {
			most, at = len(open), e.t
			which = which[:0]
			for i := range open {
				which = append(which, i)
			}
		}
	}
	slices.Sort(which)
	return most, at, which
}

// Usage is what nodes cost over a window: node-hours, and dollars at
// their prices; Unpriced counts the nodes without a price.
type Usage struct {
	Nodes     int
	NodeHours float64
	Cost      float64
	Unpriced  int
}

// UsageOf is what the nodes cost over [from, to].
func UsageOf(nodes []NodeLife, from, to time.Duration) Usage {
	var u Usage
	for i := range nodes {
		n := &nodes[i]
		a, b := max(n.Added, from), end(n.Gone, to)
		if b <= a {
			continue
		}
		h := (b - a).Hours()
		u.Nodes++
		u.NodeHours += h
		if n.Priced {
			u.Cost += h * n.PricePerHour
		} else {
			u.Unpriced++
		}
	}
	return u
}

// Quantiles are the median, 95th percentile and maximum of ds (nearest
// rank); zero when ds is empty.
func Quantiles(ds []time.Duration) (median, p95, most time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
	}
	return rank(0.5), rank(0.95), s[len(s)-1]
}

// Pool is one NodePool's nodes over a fleet's span, as the reports give
// them: the most at once, how many were launched and disrupted in it (by
// Karpenter's reason; "other" for a node it gave none), and their usage.
type Pool struct {
	Name      string // "" for the nodes no NodePool launched
	Peak      int
	Launched  int
	Disrupted int
	Reasons   []ReasonCount // by count, most first
	Usage     Usage
}

// ReasonCount is how many nodes were disrupted for one reason.
type ReasonCount struct {
	Reason string
	N      int
}

// Pools are the fleet's NodePools in the order their first nodes came
// (nodes of none, such as a node group's, last).
func (f *Fleet) Pools() []Pool {
	var names []string
	by := map[string][]NodeLife{}
	for _, n := range f.Nodes {
		if _, ok := by[n.NodePool]; !ok {
			names = append(names, n.NodePool)
		}
		by[n.NodePool] = append(by[n.NodePool], n)
	}
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "":
			return 1
		case b == "":
			return -1
		}
		return 0
	})
	var out []Pool
	for _, name := range names {
		nodes := by[name]
		p := Pool{Name: name, Usage: UsageOf(nodes, f.From, f.To)}
		spans := make([]Span, len(nodes))
		reasons := map[string]int{}
		for i, n := range nodes {
			spans[i] = n.Lifetime()
			if n.Added > f.From {
				p.Launched++
			}
			for _, s := range n.Disrupting {
				if s.From >= f.From && s.From <= f.To {
					p.Disrupted++
					r := n.Reason
					if r == "" {
						r = "other"
					}
					reasons[r]++
					break
				}
			}
		}
		p.Peak, _, _ = Peak(spans, f.From, f.To)
		for r, n := range reasons {
			p.Reasons = append(p.Reasons, ReasonCount{r, n})
		}
		slices.SortFunc(p.Reasons, func(a, b ReasonCount) int {
			if a.N != b.N {
				return b.N - a.N
			}
			return strings.Compare(a.Reason, b.Reason)
		})
		out = append(out, p)
	}
	return out
}

// ReasonsText is "Underutilized 4, Empty 1".
func (p *Pool) ReasonsText() string {
	parts := make([]string, len(p.Reasons))
	for i, r := range p.Reasons {
		parts[i] = fmt.Sprintf("%s %d", r.Reason, r.N)
	}
	return strings.Join(parts, ", ")
}

// Text is the fleet in a few lines: each NodePool's nodes, node-hours,
// cost and disruptions, and how long pods waited to run.
func (f *Fleet) Text() string {
	var b strings.Builder
	for _, p := range f.Pools() {
		name := p.Name
		if name == "" {
			name = "(no NodePool)"
		}
		fmt.Fprintf(&b, "NodePool %s: peak %d nodes, %d launched, %d disrupted", name, p.Peak, p.Launched, p.Disrupted)
		if len(p.Reasons) > 0 {
			fmt.Fprintf(&b, " (%s)", p.ReasonsText())
		}
		fmt.Fprintf(&b, ", %.2f node-hours, $%.2f\n", p.Usage.NodeHours, p.Usage.Cost)
	}
	if len(f.Startup) > 0 {
		med, p95, most := Quantiles(f.Startup)
		fmt.Fprintf(&b, "Pending→Running of %d pods: median %.1fs, p95 %.1fs, max %.1fs\n", len(f.Startup), med.Seconds(), p95.Seconds(), most.Seconds())
	}
	return b.String()
}

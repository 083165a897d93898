package nodecost

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// PoolCost is what one NodePool's nodes have cost over the cluster's life.
type PoolCost struct {
	NodePool string `json:"nodePool,omitempty"` // "" in a total
	// Nodes are the NodePool's nodes now; Launched, all it has had.
	Nodes    int `json:"nodes"`
	Launched int `json:"launched"`
	// NodeHours is the sum of its nodes' lives, in hours of the cluster's
	// clock, and Cost the sum of each life times the node's price per hour.
	NodeHours float64 `json:"nodeHours"`
	Cost      float64 `json:"cost"`
	// CostPerHour is what the nodes there now cost an hour together.
	CostPerHour float64 `json:"costPerHour"`
}

// life is one node's span in the ledger: from its Up to its Down, if any.
type life struct {
	up   Entry
	down *time.Time
}

// lives replays the ledger: a life per node (by UID), in the order they
// began. Entries a restart wrote twice count once, and a Down with no Up
// before it (its Up cut short by a crash) is left out.
func lives(entries []Entry) ([]*life, map[types.UID]*life) {
	var order []*life
	byUID := map[types.UID]*life{}
	for _, e := range entries {
		l := byUID[e.UID]
		switch {
		case e.Event == Up && l == nil:
			l = &life{up: e}
			byUID[e.UID] = l
			order = append(order, l)
		case e.Event == Down && l != nil && l.down == nil:
			at := e.At
			l.down = &at
		}
	}
	return order, byUID
}

// Summarize adds the ledger's entries up per NodePool, sorted by name,
// counting the nodes still there up to now (the cluster's time).
func Summarize(entries []Entry, now time.Time) []PoolCost {
	order, _ := lives(entries)
	pools := map[string]*PoolCost{}
	for _, l := range order {
		p := pools[l.up.NodePool]
		if p == nil {
			p = &PoolCost{NodePool: l.up.NodePool}
			pools[l.up.NodePool] = p
		}
		end := now
		if l.down != nil {
			end = *l.down
		} else {
			p.Nodes++
			p.CostPerHour += l.up.PricePerHour
		}
		// Never negative: a node that began after now (a clock read a
		// moment early) or went before it began (seconds-rounded
		// timestamps) has cost nothing yet.
		hours := max(end.Sub(l.up.At).Hours(), 0)
		p.Launched++
		p.NodeHours += hours
		p.Cost += hours * l.up.PricePerHour
	}
	out := make([]PoolCost, 0, len(pools))
	for _, p := range pools {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodePool < out[j].NodePool })
	return out
}

// Total adds up the NodePools' costs.
func Total(pools []PoolCost) PoolCost {
	var t PoolCost
	for _, p := range pools {
		t.Nodes += p.Nodes
		t.Launched += p.Launched
		t.NodeHours += p.NodeHours
		t.Cost += p.Cost
		t.CostPerHour += p.CostPerHour
	}
	return t
}

// Report is a cluster's cost at a time of its clock (`kubesim get cost`).
type Report struct {
	Cluster   string     `json:"cluster"`
	Time      time.Time  `json:"time"`
	NodePools []PoolCost `json:"nodePools"`
	Total     PoolCost   `json:"total"`
}

// ClusterReport is the cost of the cluster called name at now, its
// clock's time. A cluster without a node autoscaler has no NodePools to
// cost; one whose autoscaler has launched nothing yet has no ledger, and
// costs nothing.
func ClusterReport(home, name string, now time.Time) (*Report, error) {
	d, err := clusterdir.Open(home, name)
	if err != nil {
		return nil, err
	}
	c, err := d.Load()
	if err != nil {
		return nil, err
	}
	if c.Autoscaler.Karpenter == nil {
		return nil, fmt.Errorf("cluster %q runs no node autoscaler, so no NodePool nodes to cost: create the cluster with --autoscaler karpenter", name)
	}
	entries, err := ReadLedger(d.NodeLedger())
	if err != nil {
		return nil, err
	}
	pools := Summarize(entries, now)
	return &Report{Cluster: name, Time: now, NodePools: pools, Total: Total(pools)}, nil
}

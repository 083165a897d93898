package kubeletsim

import (
	"fmt"
	"testing"
)

func testNodeNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	return names
}

// Simulators named as a Deployment's pods are, and as kubesim's own is.
var testHolders = []string{"kubelet-sim-7d9f8b6c5-x2k4p", "kubelet-sim-7d9f8b6c5-q8w3z", "kubelet-sim-7d9f8b6c5-m5n7v", "kubesim-kubesim"}

// counts is how many of nodes each holder of a gets.
func counts(a *assignment, nodes []string) map[string]int {
	out := map[string]int{}
	for _, n := range nodes {
		out[a.owner(n)]++
	}
	return out
}

// 2, 3 or 4 simulators each get their even share of node-0 … node-1999,
// within 10 %, and every node goes to exactly one of them.
func TestAssignmentIsBalanced(t *testing.T) {
	nodes := testNodeNames(2000)
	for k := 2; k <= 4; k++ {
		a := newAssignment(testHolders[:k])
		got := counts(a, nodes)
		total, even := 0, float64(len(nodes))/float64(k)
		for _, h := range testHolders[:k] {
			total += got[h]
			if dev := (float64(got[h]) - even) / even; dev > 0.10 || dev < -0.10 {
				t.Errorf("%d simulators: %s got %d nodes, %+.1f%% off the even %.0f", k, h, got[h], 100*dev, even)
			}
		}
		if total != len(nodes) || len(got) != k {
			t.Errorf("%d simulators: %v, want all %d nodes among exactly them", k, got, len(nodes))
		}
	}
}

// When a simulator joins, only nodes that go to it move; when one leaves,
// only its nodes move. Nothing moves between the others.
func TestAssignmentMovesOnlyWhatItMust(t *testing.T) {
	nodes := testNodeNames(2000)
	for k := 1; k < 4; k++ {
		before, after := newAssignment(testHolders[:k]), newAssignment(testHolders[:k+1])
		joiner := testHolders[k]
		moved := 0
		for _, n := range nodes {
			was, is := before.owner(n), after.owner(n)
			if was != is {
				moved++
				if is != joiner {
					t.Errorf("%s joining %d: node %s moved from %s to %s", joiner, k, n, was, is)
				}
			}
			// Leaving is the same move backwards.
			if is != joiner && was != is {
				t.Errorf("%s leaving: node %s moved from %s to %s", joiner, n, is, was)
			}
		}
		// The joiner takes about its share, 1/(k+1), and no more.
		if share := float64(moved) / float64(len(nodes)); share > 1.1/float64(k+1) {
			t.Errorf("%s joining %d: %d nodes moved, more than its share", joiner, k, moved)
		}
	}
}

// Every simulator computes the same owner from the same live set, in
// whatever order it lists them; alone, it owns everything.
func TestAssignmentIsTheSameEverywhere(t *testing.T) {
	a := newAssignment([]string{"b", "a", "c", "a"})
	b := newAssignment([]string{"c", "b", "a"})
	if !a.equal(b) {
		t.Fatalf("live sets %v and %v differ", a.live, b.live)
	}
	for _, n := range testNodeNames(100) {
		if a.owner(n) != b.owner(n) {
			t.Errorf("node %s: %s and %s", n, a.owner(n), b.owner(n))
		}
	}
	if i, n := a.index("b"); i != 1 || n != 3 {
		t.Errorf("index of b = %d of %d, want 1 of 3", i, n)
	}
	if got := newAssignment([]string{"only"}).owner("node-1"); got != "only" {
		t.Errorf("alone: owner %q, want only", got)
	}
}

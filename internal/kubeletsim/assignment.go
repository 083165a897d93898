package kubeletsim

import (
	"hash/fnv"
	"slices"
)

// assignment shares a cluster's nodes among its live simulators by
// rendezvous (highest random weight) hashing: a node goes to the simulator
// whose hash with the node's name is highest. Every simulator computes the
// same answer from the same live set, nothing is stored, and when a
// simulator joins or leaves only the nodes it gains or held move.
type assignment struct {
	// live are the holder identities of the live simulators, sorted.
	live []string
}

func newAssignment(live []string) *assignment {
	live = slices.Clone(live)
	slices.Sort(live)
	return &assignment{live: slices.Compact(live)}
}

// owner is the simulator that is to hold node; "" if none is live.
func (a *assignment) owner(node string) string {
	if len(a.live) == 1 {
		return a.live[0] // alone: no hashing on the hot path
	}
	best, bestScore := "", uint64(0)
	for _, h := range a.live {
		if s := score(h, node); best == "" || s > bestScore {
			best, bestScore = h, s
		}
	}
	return best
}

// index is holder's place among the live simulators and how many there
// are (-1 if it is not live).
func (a *assignment) index(holder string) (int, int) {
	i, ok := slices.BinarySearch(a.live, holder)
	if !ok {
		return -1, len(a.live)
	}
	return i, len(a.live)
}

func (a *assignment) equal(b *assignment) bool { return slices.Equal(a.live, b.live) }

// score is the weight of holder for node. FNV-1a alone leaves names that
// differ in their last digits too alike; the finaliser (SplitMix64's)
// spreads them.
func score(holder, node string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(holder))
	h.Write([]byte{0})
	h.Write([]byte(node))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

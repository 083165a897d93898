package scenario

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// drainPlan is the order a drain works in: the surge's nodes first, all
// Ready before any node is cordoned, then the drained nodes in waves.
type drainPlan struct {
	// surge is the group to grow (nil: no surge) from surgeFrom nodes to
	// surgeTo.
	surge              *v1alpha1.NodeGroup
	surgeFrom, surgeTo int
	waves              [][]string
}

// planDrain splits nodes into waves of s.MaxUnavailable (all in one when
// it is 0), in natural name order (old-2 before old-10), and grows group,
// which has now nodes, by the surge's count. A node the surge makes is
// never drained.
func planDrain(s *v1alpha1.DrainStep, nodes []string, group *v1alpha1.NodeGroup, now int) drainPlan {
	var p drainPlan
	if s.Surge != nil && group != nil {
		p.surge, p.surgeFrom, p.surgeTo = group, now, now+s.Surge.Count
	}
	made := map[string]bool{}
	for _, n := range p.surgeNodes() {
		made[n] = true
	}
	var order []string
	for _, n := range nodes {
		if !made[n] && !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	slices.SortFunc(order, naturalCompare)
	size := s.MaxUnavailable
	if size <= 0 {
		size = len(order)
	}
	for len(order) > 0 {
		n := min(size, len(order))
		p.waves = append(p.waves, order[:n:n])
		order = order[n:]
	}
	return p
}

// surgeNodes are the names of the nodes the surge makes.
func (p drainPlan) surgeNodes() []string {
	var out []string
	for i := p.surgeFrom; i < p.surgeTo; i++ {
		out = append(out, p.surge.NodeName(i))
	}
	return out
}

// naturalCompare orders names with runs of digits compared as numbers:
// node-2 before node-10 (and, as a last resort, byte by byte).
func naturalCompare(a, b string) int {
	if c := numbersFirst(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func numbersFirst(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsAt(a), digitsAt(b)
		if da > 0 && db > 0 {
			x, _ := strconv.ParseUint(a[:da], 10, 64)
			y, _ := strconv.ParseUint(b[:db], 10, 64)
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitsAt is how many digits s starts with.
func digitsAt(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

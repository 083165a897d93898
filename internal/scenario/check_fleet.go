package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// Bounds over a window read what the fleet recorded of every change since
// the window began, not the cluster now: "never more than N" is about
// each moment, which a look at the end cannot see.
const windowOnly = "a bound over a window is checked once, when the window closes; assert it after the steps it covers"

func init() {
	checkKinds.register(nodeBoundCheck("maxNodes", func(a *v1alpha1.Assertion) *v1alpha1.NodeBound { return a.MaxNodes }, false))
	checkKinds.register(nodeBoundCheck("maxDisrupting", func(a *v1alpha1.Assertion) *v1alpha1.NodeBound { return a.MaxDisrupting }, true))
	checkKinds.register(&checkKind{
		name:     "cost",
		validate: func(a *v1alpha1.Assertion) error { return validateCost(a.Cost) },
		describe: func(a *v1alpha1.Assertion) string {
			return "cost of nodes " + costSelector(a.Cost) + sinceText(a.Cost.Since)
		},
		evaluate:   func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.cost(a.Cost) },
		assertOnly: windowOnly,
	})
}

// nodeBoundCheck is maxNodes or maxDisrupting: at most Max of the nodes
// picked at once (disrupting: being disrupted at once) over the window.
func nodeBoundCheck(name string, field func(*v1alpha1.Assertion) *v1alpha1.NodeBound, disrupting bool) *checkKind {
	return &checkKind{
		name: name,
		validate: func(a *v1alpha1.Assertion) error {
			b := field(a)
			if b.Max == nil || *b.Max < 0 {
				return fmt.Errorf("%s.max: required, 0 or more: the most nodes at once", name)
			}
			if err := parseSelector(b.Selector); err != nil {
				return fmt.Errorf("%s.selector: %v", name, err)
			}
			return nil
		},
		describe: func(a *v1alpha1.Assertion) string {
			b := field(a)
			what := "nodes"
			if disrupting {
				what = "nodes disrupting"
			}
			return fmt.Sprintf("at most %d %s %s at once%s", *b.Max, what, orAll(b.Selector), sinceText(b.Since))
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) {
			return v.nodeBound(field(a), disrupting)
		},
		assertOnly: windowOnly,
	}
}

func sinceText(since string) string {
	if since == "" {
		return ""
	}
	return fmt.Sprintf(" since %q", since)
}

// window is the fleet over the assertion's window, from the start of the
// step since names (default: the first step) to now.
func (v *view) window(since string) (*result.Fleet, error) {
	r := v.t.run
	if r == nil || v.t.fleet == nil || len(r.result.Steps) == 0 {
		return nil, fmt.Errorf("nothing recorded: no step has run")
	}
	from := r.result.Steps[0].Start
	if since != "" {
		s, ok := stepNamed(r.result.Steps, since)
		if !ok {
			return nil, fmt.Errorf("no step named %q has run", since)
		}
		from = s.Start
	}
	return v.t.fleet.snapshot(r.began, from, time.Since(r.began)), nil
}

// fleetOf is a cluster's fleet over the run, for the report; nil when it
// has no node autoscaler (and no node of a NodePool), or no step ran.
func (r *runner) fleetOf(t *target) *result.Fleet {
	if t.fleet == nil || len(r.result.Steps) == 0 {
		return nil
	}
	f := t.fleet.snapshot(r.began, r.result.Steps[0].Start, time.Since(r.began))
	f.Elastic = f.Elastic || t.spec.Autoscaler.Karpenter != nil
	if !f.Elastic {
		return nil
	}
	for i := range f.Nodes {
		f.Nodes[i].Labels = nil
	}
	return f
}

// picked are the nodes of a fleet a selector picks (labels as last seen).
func picked(f *result.Fleet, selector string) []result.NodeLife {
	sel, _ := labels.Parse(selector) // validated
	var out []result.NodeLife
	for _, n := range f.Nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out
}

func (v *view) nodeBound(b *v1alpha1.NodeBound, disrupting bool) (bool, string, string) {
	want := fmt.Sprintf("at most %d at once", *b.Max)
	f, err := v.window(b.Since)
	if err != nil {
		return false, want, err.Error()
	}
	nodes := picked(f, b.Selector)
	var spans []result.Span
	var owner []string
	for _, n := range nodes {
		if !disrupting {
			spans, owner = append(spans, n.Lifetime()), append(owner, n.Name)
			continue
		}
		for _, s := range n.Disrupting {
			spans, owner = append(spans, s), append(owner, n.Name)
		}
	}
	most, at, which := result.Peak(spans, f.From, f.To)
	actual := fmt.Sprintf("at most %d, first at %s", most, secs(at))
	if most == 0 {
		actual = "none at any time"
	}
	if most > *b.Max {
		names := make([]string, len(which))
		for i, w := range which {
			names[i] = owner[w]
		}
		actual = fmt.Sprintf("%d at once at %s: %s", most, secs(at), listSome(names, 8))
	}
	return most <= *b.Max, want, actual + " (" + windowText(f) + ")"
}

func windowText(f *result.Fleet) string {
	return fmt.Sprintf("window %s–%s", secs(f.From), secs(f.To))
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// listSome lists the first few and says how many more.
func listSome(names []string, few int) string {
	if len(names) <= few {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}

// defaultCostSelector picks the nodes a NodePool launched.
const defaultCostSelector = "karpenter.sh/nodepool"

func costSelector(c *v1alpha1.CostAssertion) string {
	if c.Selector == "" {
		return defaultCostSelector
	}
	return c.Selector
}

func validateCost(c *v1alpha1.CostAssertion) error {
	if c.Max == "" && c.MaxNodeHours == "" {
		return fmt.Errorf(`cost: give max (dollars, such as "12.5") or maxNodeHours, what to bound`)
	}
	for _, f := range []struct {
		name string
		v    v1alpha1.Decimal
	}{{"max", c.Max}, {"maxNodeHours", c.MaxNodeHours}} {
		if f.v == "" {
			continue
		}
		if x, err := strconv.ParseFloat(string(f.v), 64); err != nil || x < 0 {
			return fmt.Errorf("cost.%s: %q is not a number 0 or more, such as 12.5", f.name, f.v)
		}
	}
	if err := parseSelector(c.Selector); err != nil {
		return fmt.Errorf("cost.selector: %v", err)
	}
	return nil
}

func (v *view) cost(c *v1alpha1.CostAssertion) (bool, string, string) {
	var want []string
	maxCost, maxHours := -1.0, -1.0
	if c.Max != "" {
		maxCost, _ = strconv.ParseFloat(string(c.Max), 64)
		want = append(want, fmt.Sprintf("at most $%s", c.Max))
	}
	if c.MaxNodeHours != "" {
		maxHours, _ = strconv.ParseFloat(string(c.MaxNodeHours), 64)
		want = append(want, fmt.Sprintf("at most %s node-hours", c.MaxNodeHours))
	}
	f, err := v.window(c.Since)
	if err != nil {
		return false, strings.Join(want, ", "), err.Error()
	}
	u := result.UsageOf(picked(f, costSelector(c)), f.From, f.To)
	actual := fmt.Sprintf("$%.4f, %.3f node-hours of %d nodes", u.Cost, u.NodeHours, u.Nodes)
	if u.Unpriced > 0 {
		actual += fmt.Sprintf(" (%d without a price)", u.Unpriced)
	}
	ok := (maxCost < 0 || u.Cost <= maxCost) && (maxHours < 0 || u.NodeHours <= maxHours)
	return ok, strings.Join(want, ", "), actual + " (" + windowText(f) + ")"
}

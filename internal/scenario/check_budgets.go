package scenario

import (
	"fmt"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

func init() {
	checkKinds.register(budgetCheck("pdb", func(a *v1alpha1.Assertion) *v1alpha1.PDBAssertion { return a.PDB }, (*view).pdbs))
	dpdb := budgetCheck("dpdb", func(a *v1alpha1.Assertion) *v1alpha1.PDBAssertion { return a.DPDB }, (*view).dpdbs)
	dpdb.watch = func(t *target) { t.watchResource(policyv1alpha1.Resource) }
	checkKinds.register(dpdb)
}

// budgetCheck is the check of a kind of disruption budget: its field in
// an assertion, and how to read its budgets.
func budgetCheck(name string, field func(*v1alpha1.Assertion) *v1alpha1.PDBAssertion, read func(v *view, ns string, names []string) ([]budget, error)) *checkKind {
	return &checkKind{
		name:     name,
		validate: func(a *v1alpha1.Assertion) error { return validatePDB(name, field(a)) },
		describe: func(a *v1alpha1.Assertion) string { return name + " " + budgetNames(field(a)) },
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) {
			return v.budgets(field(a), func(ns string, names []string) ([]budget, error) { return read(v, ns, names) })
		},
	}
}

func validatePDB(kind string, p *v1alpha1.PDBAssertion) error {
	if p.Name != "" && len(p.Names) > 0 {
		return fmt.Errorf("%s: give name or names, not both", kind)
	}
	if p.DisruptionsAllowed == nil && p.CurrentHealthy == nil {
		return fmt.Errorf("%s: give disruptionsAllowed or currentHealthy, what to check", kind)
	}
	return nil
}

// budget is what a pdb or dpdb assertion reads of a budget's status.
type budget struct {
	name             string
	allowed, healthy int32
	note             string // why a DPDB allows none, if it says
}

func budgetNames(p *v1alpha1.PDBAssertion) string {
	switch {
	case p.Name != "":
		return p.Name
	case len(p.Names) > 0:
		return strings.Join(p.Names, ", ")
	}
	return "(all)"
}

// budgets checks each budget an assertion names (all in the namespace if
// none) against its expected status.
func (v *view) budgets(p *v1alpha1.PDBAssertion, read func(ns string, names []string) ([]budget, error)) (bool, string, string) {
	ns := namespaceOrDefault(p.Namespace)
	names := p.Names
	if p.Name != "" {
		names = []string{p.Name}
	}
	var exp []string
	if d := p.DisruptionsAllowed; d != nil {
		exp = append(exp, fmt.Sprintf("disruptionsAllowed=%d", *d))
	}
	if h := p.CurrentHealthy; h != nil {
		exp = append(exp, fmt.Sprintf("currentHealthy=%d", *h))
	}
	want := strings.Join(exp, " ")
	if len(names) != 1 {
		want += " for " + budgetNames(p)
	}
	got, err := read(ns, names)
	if err != nil {
		return false, want, oneLine(err.Error())
	}
	if len(got) == 0 {
		return false, want, "none in namespace " + ns
	}
	ok := true
	var actual []string
	for _, b := range got {
		ok = ok && (p.DisruptionsAllowed == nil || b.allowed == *p.DisruptionsAllowed) &&
			(p.CurrentHealthy == nil || b.healthy == *p.CurrentHealthy)
		a := fmt.Sprintf("disruptionsAllowed=%d currentHealthy=%d", b.allowed, b.healthy)
		if b.note != "" {
			a += " (" + b.note + ")"
		}
		if len(names) != 1 {
			a = b.name + ": " + a
		}
		actual = append(actual, a)
	}
	return ok, want, strings.Join(actual, "; ")
}

// pdbs reads PodDisruptionBudgets: those named, or every one in ns.
func (v *view) pdbs(ns string, names []string) ([]budget, error) {
	var items []policyv1.PodDisruptionBudget
	if len(names) == 0 {
		list, err := v.t.client.PolicyV1().PodDisruptionBudgets(ns).List(v.ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		items = list.Items
	}
	for _, n := range names {
		pdb, err := v.t.client.PolicyV1().PodDisruptionBudgets(ns).Get(v.ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		items = append(items, *pdb)
	}
	out := make([]budget, len(items))
	for i, p := range items {
		out[i] = budget{name: p.Name, allowed: p.Status.DisruptionsAllowed, healthy: p.Status.CurrentHealthy}
	}
	return out, nil
}

// dpdbs reads DistributedPodDisruptionBudgets: those named, or every one in ns.
func (v *view) dpdbs(ns string, names []string) ([]budget, error) {
	r := v.t.dynamic.Resource(policyv1alpha1.Resource).Namespace(ns)
	var items []unstructured.Unstructured
	if len(names) == 0 {
		list, err := r.List(v.ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		items = list.Items
	}
	for _, n := range names {
		u, err := r.Get(v.ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		items = append(items, *u)
	}
	out := make([]budget, len(items))
	for i := range items {
		var d policyv1alpha1.DistributedPodDisruptionBudget
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", items[i].GetName(), err)
		}
		out[i] = budget{name: d.Name, allowed: d.Status.DisruptionsAllowed, healthy: d.Status.CurrentHealthy}
		if d.Status.DisruptionsAllowed == 0 {
			out[i].note = dpdbWhy(&d)
		}
	}
	return out, nil
}

// dpdbWhy is what a DPDB that allows nothing says about it: a Degraded
// condition's message, or how many members it observes.
func dpdbWhy(d *policyv1alpha1.DistributedPodDisruptionBudget) string {
	for _, c := range d.Status.Conditions {
		if c.Type == policyv1alpha1.ConditionDegraded && c.Status == metav1.ConditionTrue {
			return c.Message
		}
	}
	if d.Status.Federated != "" {
		return "federated " + d.Status.Federated
	}
	return ""
}

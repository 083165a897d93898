package scenario

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
	"github.com/kubesim/kubesim/internal/scale"
)

// Outcome is what came of one assertion.
type Outcome struct {
	Name     string `json:"name"`
	Passed   bool   `json:"passed"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
}

// view is the cluster as one evaluation sees it: listed live, once each.
type view struct {
	t     *target
	ctx   context.Context
	pods  []corev1.Pod
	nodes []corev1.Node
	err   error
}

func (t *target) view(ctx context.Context) *view {
	v := &view{t: t, ctx: ctx}
	pods, err := t.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		v.err = err
		return v
	}
	nodes, err := t.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		v.err = err
		return v
	}
	v.pods, v.nodes = pods.Items, nodes.Items
	sort.Slice(v.nodes, func(i, j int) bool { return v.nodes[i].Name < v.nodes[j].Name })
	return v
}

// podsOf are the live (not terminating) pods of a set.
func (v *view) podsOf(s v1alpha1.PodSet) []corev1.Pod {
	sel, _ := labels.Parse(s.Selector)
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	var out []corev1.Pod
	for _, p := range v.pods {
		if (ns == "*" || p.Namespace == ns) && sel.Matches(labels.Set(p.Labels)) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func (v *view) nodesOf(selector string) map[string]*corev1.Node {
	sel, _ := labels.Parse(selector)
	out := map[string]*corev1.Node{}
	for i := range v.nodes {
		if sel.Matches(labels.Set(v.nodes[i].Labels)) {
			out[v.nodes[i].Name] = &v.nodes[i]
		}
	}
	return out
}

// describe is an assertion's default name.
func describe(a *v1alpha1.Assertion) string {
	if a.Name != "" {
		return a.Name
	}
	switch {
	case a.Pods != nil:
		return fmt.Sprintf("pods %s%s%s %s", orAll(a.Pods.Selector), prefixed(" phase=", a.Pods.Phase), prefixed(" node=", a.Pods.Node), countText(a.Pods.Count))
	case a.Spread != nil:
		return fmt.Sprintf("spread of %s over %s", orAll(a.Spread.Selector), a.Spread.TopologyKey)
	case a.PerNode != nil:
		return fmt.Sprintf("at most %d pods of %s per node", a.PerNode.Max, orAll(a.PerNode.Selector))
	case a.OnlyOn != nil:
		return fmt.Sprintf("pods %s only on %s", orAll(a.OnlyOn.Selector), a.OnlyOn.Nodes)
	case a.Nodes != nil:
		return fmt.Sprintf("nodes %s %s", a.Nodes.Nodes, countText(a.Nodes.Count))
	case a.PDB != nil:
		return "pdb " + budgetNames(a.PDB)
	case a.DPDB != nil:
		return "dpdb " + budgetNames(a.DPDB)
	case a.Evictions != nil:
		return "evictions of the last disruption"
	case a.Event != nil:
		return "event " + a.Event.Reason
	case a.RolledOut != nil:
		return "rolled out " + a.RolledOut.Name
	case a.CEL != "":
		return "cel: " + a.CEL
	case a.Object != nil:
		u := unstructured.Unstructured{Object: a.Object}
		return fmt.Sprintf("%s %s matches", u.GetKind(), u.GetName())
	}
	return "assertion"
}

func orAll(s string) string {
	if s == "" {
		return "(all)"
	}
	return s
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func countText(c v1alpha1.Count) string {
	var parts []string
	if c.Count != nil {
		parts = append(parts, fmt.Sprintf("= %d", *c.Count))
	}
	if c.Min != nil {
		parts = append(parts, fmt.Sprintf(">= %d", *c.Min))
	}
	if c.Max != nil {
		parts = append(parts, fmt.Sprintf("<= %d", *c.Max))
	}
	return strings.Join(parts, " ")
}

func countOK(c v1alpha1.Count, n int) bool {
	return (c.Count == nil || *c.Count == n) && (c.Min == nil || n >= *c.Min) && (c.Max == nil || n <= *c.Max)
}

// cachedView is the cluster as the watches last saw it: what a wait
// re-checks on every change, at no cost to the API server.
func (t *target) cachedView(ctx context.Context) *view {
	v := &view{t: t, ctx: ctx}
	pods, err := t.factory.Core().V1().Pods().Lister().List(labels.Everything())
	if err != nil {
		v.err = err
		return v
	}
	nodes, err := t.factory.Core().V1().Nodes().Lister().List(labels.Everything())
	if err != nil {
		v.err = err
		return v
	}
	for _, p := range pods {
		v.pods = append(v.pods, *p)
	}
	for _, n := range nodes {
		v.nodes = append(v.nodes, *n)
	}
	sort.Slice(v.nodes, func(i, j int) bool { return v.nodes[i].Name < v.nodes[j].Name })
	return v
}

// check evaluates one assertion against the cluster listed now.
func (t *target) check(ctx context.Context, a *v1alpha1.Assertion) Outcome {
	return t.checkIn(t.view(ctx), a)
}

// checkIn evaluates one assertion in a view.
func (t *target) checkIn(v *view, a *v1alpha1.Assertion) Outcome {
	o := Outcome{Name: describe(a)}
	if v.err != nil {
		o.Actual = v.err.Error()
		return o
	}
	o.Passed, o.Expected, o.Actual = v.evaluate(a)
	return o
}

func (v *view) evaluate(a *v1alpha1.Assertion) (bool, string, string) {
	switch {
	case a.Pods != nil:
		p := a.Pods
		var onNodes map[string]*corev1.Node
		if p.NodeSelector != "" {
			onNodes = v.nodesOf(p.NodeSelector)
		}
		n := 0
		for _, pod := range v.podsOf(p.PodSet) {
			if (p.Phase == "" || string(pod.Status.Phase) == p.Phase) &&
				(p.Ready == nil || *p.Ready == podReady(&pod)) &&
				(p.Node == "" || pod.Spec.NodeName == p.Node) &&
				(onNodes == nil || onNodes[pod.Spec.NodeName] != nil) {
				n++
			}
		}
		return countOK(p.Count, n), "count " + countText(p.Count), fmt.Sprintf("%d", n)
	case a.Spread != nil:
		return v.spread(a.Spread)
	case a.PerNode != nil:
		per := map[string]int{}
		for _, pod := range v.podsOf(a.PerNode.PodSet) {
			if pod.Spec.NodeName != "" {
				per[pod.Spec.NodeName]++
			}
		}
		var over []string
		for _, n := range sortedKeys(per) {
			if per[n] > a.PerNode.Max {
				over = append(over, fmt.Sprintf("%s has %d", n, per[n]))
			}
		}
		return len(over) == 0, fmt.Sprintf("at most %d per node", a.PerNode.Max), orNone(strings.Join(over, ", "))
	case a.OnlyOn != nil:
		names, err := v.t.nodes(v.ctx, a.OnlyOn.Nodes)
		if err != nil {
			return false, "", err.Error()
		}
		var off []string
		for _, pod := range v.podsOf(a.OnlyOn.PodSet) {
			if pod.Spec.NodeName != "" && !slices.Contains(names, pod.Spec.NodeName) {
				off = append(off, pod.Name+" on "+pod.Spec.NodeName)
			}
		}
		return len(off) == 0, "only on " + strings.Join(names, ","), orNone(strings.Join(off, ", "))
	case a.Nodes != nil:
		sel := v.nodesOf(a.Nodes.Nodes.Selector)
		n := 0
		for name, node := range sel {
			if len(a.Nodes.Nodes.Names) > 0 && !slices.Contains(a.Nodes.Nodes.Names, name) {
				continue
			}
			if a.Nodes.Ready == nil || *a.Nodes.Ready == nodeReady(node) {
				n++
			}
		}
		return countOK(a.Nodes.Count, n), "count " + countText(a.Nodes.Count), fmt.Sprintf("%d", n)
	case a.PDB != nil:
		return v.budgets(a.PDB, v.pdbs)
	case a.DPDB != nil:
		return v.budgets(a.DPDB, v.dpdbs)
	case a.Evictions != nil:
		d := v.t.last
		if d == nil {
			return false, "a drain, evict or deschedule step before", "none ran"
		}
		made, refused := len(d.Made), len(d.Refused)
		ok := (a.Evictions.Made == nil || *a.Evictions.Made == made) && (a.Evictions.Refused == nil || *a.Evictions.Refused == refused)
		return ok, fmt.Sprintf("made=%s refused=%s", intOrAny(a.Evictions.Made), intOrAny(a.Evictions.Refused)),
			fmt.Sprintf("made=%d refused=%d (%s)", made, refused, d.What)
	case a.Event != nil:
		return v.event(a.Event)
	case a.RolledOut != nil:
		return v.rolledOut(a.RolledOut)
	case a.CEL != "":
		return v.cel(a.CEL)
	case a.Object != nil:
		return v.object(a.Object)
	}
	return false, "", "no check"
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
	ns := p.Namespace
	if ns == "" {
		ns = "default"
	}
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

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func intOrAny(p *int) string {
	if p == nil {
		return "any"
	}
	return fmt.Sprint(*p)
}

func (v *view) spread(s *v1alpha1.SpreadAssertion) (bool, string, string) {
	nodes := v.nodesOf(s.NodeSelector)
	counts := map[string]int{}
	for _, n := range nodes {
		if d, ok := n.Labels[s.TopologyKey]; ok {
			counts[d] += 0
		}
	}
	for _, pod := range v.podsOf(s.PodSet) {
		if n := nodes[pod.Spec.NodeName]; n != nil {
			if d, ok := n.Labels[s.TopologyKey]; ok {
				counts[d]++
			}
		}
	}
	if len(counts) == 0 {
		return false, "nodes labelled " + s.TopologyKey, "no node has the key"
	}
	lo, hi := -1, 0
	var parts []string
	for _, d := range sortedKeys(counts) {
		c := counts[d]
		parts = append(parts, fmt.Sprintf("%s=%d", d, c))
		if lo < 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	ok, exp := true, []string{}
	if s.MaxSkew != nil {
		ok = hi-lo <= *s.MaxSkew
		exp = append(exp, fmt.Sprintf("skew <= %d", *s.MaxSkew))
	}
	if s.Counts != nil {
		var want []string
		for _, d := range sortedKeys(s.Counts) {
			want = append(want, fmt.Sprintf("%s=%d", d, s.Counts[d]))
			ok = ok && counts[d] == s.Counts[d]
		}
		exp = append(exp, strings.Join(want, " "))
	}
	return ok, strings.Join(exp, ", "), fmt.Sprintf("skew %d: %s", hi-lo, strings.Join(parts, " "))
}

func (v *view) event(e *v1alpha1.EventAssertion) (bool, string, string) {
	ns := e.Namespace
	if ns == "" {
		ns = "default"
	}
	list, err := v.t.client.CoreV1().Events(ns).List(v.ctx, metav1.ListOptions{FieldSelector: "reason=" + e.Reason})
	if err != nil {
		return false, "", err.Error()
	}
	exp := fmt.Sprintf("an event %s on %s %s saying %q", e.Reason, e.Kind, e.Name, e.Message)
	for _, ev := range list.Items {
		o := ev.InvolvedObject
		name := strings.TrimSuffix(e.Name, "*")
		if (e.Kind == "" || o.Kind == e.Kind) &&
			(e.Name == "" || o.Name == e.Name || (strings.HasSuffix(e.Name, "*") && strings.HasPrefix(o.Name, name))) &&
			strings.Contains(ev.Message, e.Message) {
			return true, exp, fmt.Sprintf("%s on %s/%s: %s", ev.Reason, o.Kind, o.Name, ev.Message)
		}
	}
	return false, exp, fmt.Sprintf("%d %s events, none matching", len(list.Items), e.Reason)
}

func (v *view) rolledOut(w *v1alpha1.WorkloadRef) (bool, string, string) {
	ns := w.Namespace
	if ns == "" {
		ns = "default"
	}
	d, err := v.t.client.AppsV1().Deployments(ns).Get(v.ctx, w.Name, metav1.GetOptions{})
	if err != nil {
		return false, "", err.Error()
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	ok := s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
	return ok, fmt.Sprintf("%d updated and available", want),
		fmt.Sprintf("replicas=%d updated=%d available=%d", s.Replicas, s.UpdatedReplicas, s.AvailableReplicas)
}

// object checks a partial object: every field given must be there with
// that value; a list must have as many items, each matching in turn.
// Without a name, any object of the kind (and labels) that matches will do.
func (v *view) object(want v1alpha1.Object) (bool, string, string) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(map[string]any(want))}
	r, err := v.t.resource(u)
	if err != nil {
		return false, "", err.Error()
	}
	var candidates []unstructured.Unstructured
	if u.GetName() != "" {
		got, err := r.Get(v.ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, "the object", err.Error()
		}
		candidates = append(candidates, *got)
	} else {
		list, err := r.List(v.ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(u.GetLabels()).String()})
		if err != nil {
			return false, "", err.Error()
		}
		candidates = list.Items
	}
	delete(u.Object, "apiVersion")
	delete(u.Object, "kind")
	last := "no object"
	for _, c := range candidates {
		path, ok := subset(u.Object, c.Object, "")
		if ok {
			return true, "match", "match"
		}
		last = fmt.Sprintf("%s/%s: %s", c.GetKind(), c.GetName(), path)
	}
	return false, "every field given", last
}

// subset reports whether want is contained in got; if not, where not.
func subset(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want a mapping, got %v", orRoot(path), got), false
		}
		for _, k := range sortedKeys(w) {
			if where, ok := subset(w[k], g[k], path+"."+k); !ok {
				return where, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %d items, got %v", orRoot(path), len(w), got), false
		}
		for i := range w {
			if where, ok := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return where, false
			}
		}
		return "", true
	}
	if fmt.Sprint(want) == fmt.Sprint(got) || reflect.DeepEqual(want, got) {
		return "", true
	}
	return fmt.Sprintf("%s: want %v, got %v", orRoot(path), want, got), false
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return strings.TrimPrefix(p, ".")
}

// celEnv is made once: building it is the slow part.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("pods", cel.ListType(cel.DynType)),
		cel.Variable("nodes", cel.ListType(cel.DynType)),
		cel.Variable("pdbs", cel.ListType(cel.DynType)),
		cel.Variable("deployments", cel.ListType(cel.DynType)),
		cel.Variable("evictions", cel.MapType(cel.StringType, cel.DynType)),
	)
})

// compileCEL checks a boolean CEL expression over the cluster's objects:
// pods, nodes, pdbs, deployments (lists of objects as in the API) and
// evictions ({made: [...], refused: [...]}, of the last disruption).
func compileCEL(expr string) (cel.Program, error) {
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("the expression gives %s; it must give true or false", ast.OutputType())
	}
	return env.Program(ast)
}

func (v *view) cel(expr string) (bool, string, string) {
	prg, err := compileCEL(expr)
	if err != nil {
		return false, "", err.Error()
	}
	pdbs, err := v.t.client.PolicyV1().PodDisruptionBudgets("").List(v.ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err.Error()
	}
	deps, err := v.t.client.AppsV1().Deployments("").List(v.ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err.Error()
	}
	ev := map[string]any{"made": []any{}, "refused": []any{}}
	if d := v.t.last; d != nil {
		ev["made"], ev["refused"] = toAny(d.Made), toAny(d.Refused)
	}
	out, _, err := prg.Eval(map[string]any{
		"pods":        toObjects(v.pods),
		"nodes":       toObjects(v.nodes),
		"pdbs":        toObjects(pdbs.Items),
		"deployments": toObjects(deps.Items),
		"evictions":   ev,
	})
	if err != nil {
		return false, "true", "error: " + err.Error()
	}
	b, ok := out.Value().(bool)
	return ok && b, "true", fmt.Sprint(out.Value())
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func toObjects[T corev1.Pod | corev1.Node | policyv1.PodDisruptionBudget | appsv1.Deployment](items []T) []any {
	out := make([]any, 0, len(items))
	for i := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&items[i])
		if err == nil {
			out = append(out, m)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeReady(n *corev1.Node) bool { return scale.IsReady(n) }

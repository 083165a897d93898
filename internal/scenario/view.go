package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// view is the cluster as one evaluation sees it: listed live, once each.
type view struct {
	t     *target
	ctx   context.Context
	pods  []corev1.Pod
	nodes []corev1.Node
	// slices and claims: the cluster's DRA devices and their allocations;
	// claims are read only where there are slices.
	slices []resourcev1.ResourceSlice
	claims []resourcev1.ResourceClaim
	err    error
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
	if slices, err := t.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{}); err == nil && len(slices.Items) > 0 {
		v.slices = slices.Items
		if claims, err := t.client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{}); err == nil {
			v.claims = claims.Items
		}
	}
	sort.Slice(v.nodes, func(i, j int) bool { return v.nodes[i].Name < v.nodes[j].Name })
	return v
}

// podsOf are the live (not terminating) pods of a set.
func (v *view) podsOf(s v1alpha1.PodSet) []corev1.Pod {
	sel, _ := labels.Parse(s.Selector)
	ns := namespaceOrDefault(s.Namespace)
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

// namespaceOrDefault is the namespace a check or step that names none
// acts in.
func namespaceOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// orAll, countText, countOK and orNone word what checks expect and find.

func orAll(s string) string {
	if s == "" {
		return "(all)"
	}
	return s
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
func (t *target) check(ctx context.Context, a *v1alpha1.Assertion) result.Outcome {
	return t.checkIn(t.view(ctx), a)
}

// checkIn evaluates one assertion in a view.
func (t *target) checkIn(v *view, a *v1alpha1.Assertion) result.Outcome {
	o := result.Outcome{Name: describe(a)}
	if v.err != nil {
		o.Actual = v.err.Error()
		return o
	}
	o.Passed, o.Expected, o.Actual = v.evaluate(a)
	return o
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

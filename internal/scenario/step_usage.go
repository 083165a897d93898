package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	apiwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

func init() {
	stepKinds.register(&stepKind{
		name:     "usage",
		validate: func(s *v1alpha1.Step, _ clusterNames) error { _, err := usageSpec(s.Usage); return err },
		do: func(x *stepRun) (string, error) {
			return x.t.setUsage(x.ctx, x.r.result.Name, x.step.Usage)
		},
	})
}

// usageSpec is the ClusterResourceUsage spec a usage step declares, or an
// error naming the field at fault.
func usageSpec(u *v1alpha1.UsageStep) (*kwokv1alpha1.ClusterResourceUsageSpec, error) {
	sel := &kwokv1alpha1.ObjectSelector{}
	if u.Namespace != "*" {
		sel.MatchNamespaces = []string{namespaceOrDefault(u.Namespace)}
	}
	if u.Selector != "" {
		if err := sel.SelectLabels(u.Selector); err != nil {
			return nil, fmt.Errorf("selector: %q is not a label selector (%v); write it as kubectl's -l takes it, e.g. app=web", u.Selector, err)
		}
	}
	if u.CPU == nil && u.Memory == nil {
		return nil, fmt.Errorf("give cpu or memory (or both), e.g. cpu: 900m")
	}
	usage := map[string]kwokv1alpha1.ResourceUsageValue{}
	for _, r := range []struct {
		name string
		a    *v1alpha1.UsageAmount
	}{{"cpu", u.CPU}, {"memory", u.Memory}} {
		if r.a == nil {
			continue
		}
		v, err := usageValue(r.a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		usage[r.name] = v
	}
	return &kwokv1alpha1.ClusterResourceUsageSpec{Selector: sel, Usages: []kwokv1alpha1.ResourceUsageContainer{{Usage: usage}}}, nil
}

// usageEnv compiles usage expressions as the usage-metrics component does,
// so a bad one fails before any cluster is made.
var usageEnv = sync.OnceValues(kwokcel.NewUsageEnv)

func usageValue(a *v1alpha1.UsageAmount) (kwokv1alpha1.ResourceUsageValue, error) {
	switch {
	case (a.Value == "") == (a.Expression == ""):
		return kwokv1alpha1.ResourceUsageValue{}, fmt.Errorf("give a quantity (900m) or {expression: ...}, one of them")
	case a.Expression != "":
		env, err := usageEnv()
		if err == nil {
			_, err = env.Compile(a.Expression)
		}
		if err != nil {
			return kwokv1alpha1.ResourceUsageValue{}, fmt.Errorf("expression: %v", err)
		}
		return kwokv1alpha1.ResourceUsageValue{Expression: ptr.To(a.Expression)}, nil
	}
	q, err := resource.ParseQuantity(a.Value)
	if err != nil {
		return kwokv1alpha1.ResourceUsageValue{}, fmt.Errorf("%q is not a quantity; write it as 900m, 1.5 or 200Mi", a.Value)
	}
	if q.Sign() < 0 {
		return kwokv1alpha1.ResourceUsageValue{}, fmt.Errorf("%s is negative; give a usage of 0 or more", a.Value)
	}
	return kwokv1alpha1.ResourceUsageValue{Value: &q}, nil
}

// usageName names the ClusterResourceUsage of a scenario's usage step: the
// same pods, the same object, so the next step for them replaces it.
func usageName(scenario string, u *v1alpha1.UsageStep) string {
	ns := u.Namespace
	if ns != "*" {
		ns = namespaceOrDefault(ns)
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", scenario, ns, u.Selector)
	var b strings.Builder
	dash := true // no leading dash, none doubled
	for _, r := range strings.ToLower(scenario + "-" + strings.ReplaceAll(ns, "*", "all") + "-" + u.Selector) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimSuffix(b.String(), "-")
	if len(slug) > 200 {
		slug = slug[:200]
	}
	return fmt.Sprintf("%s-%08x", slug, h.Sum32())
}

// setUsage creates or replaces the step's ClusterResourceUsage and waits
// until the usage-metrics component has accepted it, so what follows reads
// the new usage.
func (t *target) setUsage(ctx context.Context, scenario string, u *v1alpha1.UsageStep) (string, error) {
	if t.spec != nil && t.spec.Usage.Disabled {
		return "", fmt.Errorf("the cluster has usage: {disabled: true}: nothing serves usage; remove it to use a usage step")
	}
	spec, err := usageSpec(u)
	if err != nil {
		return "", err
	}
	name := usageName(scenario, u)
	obj := kwokv1alpha1.ClusterResourceUsage{
		TypeMeta:   metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion, Kind: kwokv1alpha1.ClusterResourceUsageKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": fieldManager}},
		Spec:       *spec,
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	r := t.dynamic.Resource(kwokv1alpha1.ClusterResourceUsagesResource)
	applied, err := r.Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)})
	if err != nil {
		return "", fmt.Errorf("ClusterResourceUsage %s: %w", name, err)
	}
	what := describeUsage(u)
	gen := applied.GetGeneration()
	var cond *metav1.Condition
	err = apiwait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cond = acceptedCondition(got)
		return cond != nil && cond.ObservedGeneration >= gen, nil
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("ClusterResourceUsage %s (%s) not accepted by the usage-metrics component in time: is usage disabled in the cluster?", name, what)
	case cond.Status != metav1.ConditionTrue:
		return "", fmt.Errorf("ClusterResourceUsage %s: %s", name, cond.Message)
	}
	return what, nil
}

func acceptedCondition(u *unstructured.Unstructured) *metav1.Condition {
	var status kwokv1alpha1.ClusterResourceUsageStatus
	raw, _, _ := unstructured.NestedMap(u.Object, "status")
	if raw == nil {
		return nil
	}
	data, err := json.Marshal(raw)
	if err != nil || json.Unmarshal(data, &status) != nil {
		return nil
	}
	return meta.FindStatusCondition(status.Conditions, kwokv1alpha1.UsageConditionAccepted)
}

// describeUsage is the step's one-line summary: what now uses what.
func describeUsage(u *v1alpha1.UsageStep) string {
	pods := "pods"
	if u.Selector != "" {
		pods += " " + u.Selector
	}
	switch u.Namespace {
	case "*":
		pods += " in every namespace"
	default:
		pods += " in " + namespaceOrDefault(u.Namespace)
	}
	var parts []string
	for _, r := range []struct {
		name string
		a    *v1alpha1.UsageAmount
	}{{"cpu", u.CPU}, {"memory", u.Memory}} {
		switch {
		case r.a == nil:
		case r.a.Expression != "":
			parts = append(parts, r.name+" "+r.a.Expression)
		default:
			parts = append(parts, r.name+" "+r.a.Value)
		}
	}
	return pods + ": " + strings.Join(parts, ", ") + " per container"
}

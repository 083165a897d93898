package kubesimtest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// usageTimeout bounds SetUsage's wait for the usage-metrics component.
const usageTimeout = 30 * time.Second

// SetUsage declares what each container of the pods selector picks (a
// label selector as kubectl's -l takes it; "" for every pod) in namespace
// ("" for every namespace) uses from now on, as kubectl top and the
// HorizontalPodAutoscaler read it: cpu and memory are quantities ("900m",
// "200Mi") or CEL expressions as a ClusterResourceUsage takes them
// (`pod.SinceSecond() < 60.0 ? Quantity("900m") : Quantity("200m")`); ""
// leaves that resource to the cluster's default (50 % of the request).
// Pods created later (an HPA's) are covered too. Calling it again for the
// same namespace and selector replaces the usage. It returns once the
// usage-metrics component has accepted the usage, and fails the test on a
// bad selector, quantity or expression, or in a cluster started
// WithoutUsageMetrics. The usage is deleted when the test ends.
func (c *Cluster) SetUsage(namespace, selector, cpu, memory string) {
	c.t.Helper()
	if err := c.setUsage(namespace, selector, cpu, memory); err != nil {
		c.t.Fatalf("kubesimtest: SetUsage(%q, %q, %q, %q): %v", namespace, selector, cpu, memory, err)
	}
}

func (c *Cluster) setUsage(namespace, selector, cpu, memory string) error {
	sel := &kwokv1alpha1.ObjectSelector{}
	if namespace != "" {
		sel.MatchNamespaces = []string{namespace}
	}
	if err := sel.SelectLabels(selector); err != nil {
		return fmt.Errorf("selector: %v", err)
	}
	if cpu == "" && memory == "" {
		return fmt.Errorf("give cpu or memory (or both)")
	}
	usage := map[string]kwokv1alpha1.ResourceUsageValue{}
	for _, r := range []struct{ name, v string }{{"cpu", cpu}, {"memory", memory}} {
		switch q, err := resource.ParseQuantity(r.v); {
		case r.v == "":
		case err == nil && q.Sign() < 0:
			return fmt.Errorf("%s: %s is negative; give a usage of 0 or more", r.name, r.v)
		case err == nil:
			usage[r.name] = kwokv1alpha1.ResourceUsageValue{Value: &q}
		default: // not a quantity: an expression, which usage-metrics compiles
			usage[r.name] = kwokv1alpha1.ResourceUsageValue{Expression: &r.v}
		}
	}
	name := usageName(namespace, selector)
	obj := kwokv1alpha1.ClusterResourceUsage{
		TypeMeta:   metav1.TypeMeta{APIVersion: kwokv1alpha1.GroupVersion, Kind: kwokv1alpha1.ClusterResourceUsageKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "kubesimtest"}},
		Spec:       kwokv1alpha1.ClusterResourceUsageSpec{Selector: sel, Usages: []kwokv1alpha1.ResourceUsageContainer{{Usage: usage}}},
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), usageTimeout)
	defer cancel()
	r := dyn.Resource(kwokv1alpha1.ClusterResourceUsagesResource)
	force := true
	applied, err := r.Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "kubesimtest", Force: &force})
	if err != nil {
		return fmt.Errorf("ClusterResourceUsage %s: %w", name, err)
	}
	c.t.Cleanup(func() { // a shared cluster outlives the test
		_ = r.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// Accepted, for this generation, says usage-metrics reads it now.
	var accepted *metav1.Condition
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		var u kwokv1alpha1.ClusterResourceUsage
		if data, err := got.MarshalJSON(); err != nil || json.Unmarshal(data, &u) != nil {
			return false, nil
		}
		accepted = meta.FindStatusCondition(u.Status.Conditions, kwokv1alpha1.UsageConditionAccepted)
		return accepted != nil && accepted.ObservedGeneration >= applied.GetGeneration(), nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("ClusterResourceUsage %s not accepted in %s: is the cluster WithoutUsageMetrics?", name, usageTimeout)
	case accepted.Status != metav1.ConditionTrue:
		return fmt.Errorf("ClusterResourceUsage %s: %s", name, accepted.Message)
	}
	return nil
}

// usageName is the same for the same pods, so SetUsage replaces its own.
func usageName(namespace, selector string) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s", namespace, selector)
	slug := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(namespace+"-"+selector), "-"), "-")
	if len(slug) > 200 {
		slug = slug[:200]
	}
	if slug != "" {
		slug += "-"
	}
	return fmt.Sprintf("kubesimtest-%s%08x", slug, h.Sum32())
}

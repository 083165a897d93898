package dpdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// memberView is one member as this sync observed it.
type memberView struct {
	member
	obs        Observation
	message    string
	observedAt time.Time
}

// observeMembers reads every member: this cluster's from the informer,
// others' through their watches. A member listed twice, or naming the
// DPDB's own child, is not counted (it would count pods twice).
func (c *Controller) observeMembers(d *policyv1alpha1.DistributedPodDisruptionBudget) []memberView {
	now := c.now()
	seen := map[member]bool{}
	var views []memberView
	for _, m := range resolveMembers(d, c.opts.ClusterName) {
		v := memberView{member: m}
		switch {
		case seen[m]:
			v.message = "listed twice in spec.federation; remove one"
		case m.Cluster == "" && m.Namespace == d.Namespace && m.Name == d.Name:
			v.message = "is this DPDB's own child PDB; remove it from spec.federation"
		case m.Cluster == "":
			v.obs, v.message = observeIn(c.pdbs, m, "")
			v.observedAt = now
		default:
			v.obs, v.message, v.observedAt = c.remotes.observe(m)
		}
		seen[m] = true
		views = append(views, v)
	}
	return views
}

// sync brings one DPDB's child PDB and status up to date.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, exists, err := c.dpdbs.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err // the child goes with it: it is owned
	}
	d, err := asDPDB(obj)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return nil
	}
	views := c.observeMembers(d)
	obs := make([]Observation, len(views))
	for i, v := range views {
		obs[i] = v.obs
	}
	child, err := c.pdbs.PodDisruptionBudgets(d.Namespace).Get(d.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		child = nil
	}
	st := status{dpdb: d, views: views}
	if child != nil && !metav1.IsControlledBy(child, d) {
		st.conflict = fmt.Sprintf("a PodDisruptionBudget %s/%s exists that this DPDB does not own; delete or rename it", d.Namespace, d.Name)
		return c.writeStatus(ctx, d, st.build(c.now()))
	}
	var own Observation
	if child != nil {
		own, _ = observe(child)
	}
	st.own = own
	st.budget, st.specErr = Compute(d.Spec, own, obs)
	if d.Spec.Selector == nil {
		st.specErr = errors.New("spec.selector: required; select this namespace's pods of the budget")
	} else if _, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil {
		st.specErr = fmt.Errorf("spec.selector: %v", err)
	}
	if d.Spec.Selector != nil && (st.specErr == nil || child != nil) {
		// A bad spec with a child still closes the child.
		child, st.childChanged, err = c.ensureChild(ctx, d, child, st.budget.ChildMinAvailable)
		if err != nil {
			return err
		}
	}
	st.child = child
	if err := c.writeStatus(ctx, d, st.build(c.now())); err != nil {
		return err
	}
	if !st.budget.Sure {
		// Reach and staleness are time-bound: look again soon.
		c.queue.AddAfter(key, c.opts.ProbeInterval)
	}
	return nil
}

// ensureChild creates or corrects the child PDB. It reports whether it
// wrote: the child's status then waits for the disruption controller.
func (c *Controller) ensureChild(ctx context.Context, d *policyv1alpha1.DistributedPodDisruptionBudget, child *policyv1.PodDisruptionBudget, minAvailable int32) (*policyv1.PodDisruptionBudget, bool, error) {
	want := childSpec(d, minAvailable)
	pdbs := c.client.PolicyV1().PodDisruptionBudgets(d.Namespace)
	if child == nil {
		created, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{
				Name: d.Name, Namespace: d.Namespace,
				Labels:          map[string]string{ChildLabel: d.Name},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, policyv1alpha1.SchemeGroupVersion.WithKind(policyv1alpha1.Kind))},
			},
			Spec: want,
		}, metav1.CreateOptions{})
		return created, err == nil, err
	}
	if apiequality.Semantic.DeepEqual(child.Spec, want) {
		return child, false, nil
	}
	updated := child.DeepCopy()
	updated.Spec = want
	updated, err := pdbs.Update(ctx, updated, metav1.UpdateOptions{})
	if err == nil {
		klog.InfoS("child PDB updated", "pdb", d.Namespace+"/"+d.Name, "minAvailable", minAvailable)
	}
	return updated, err == nil, err
}

// ChildLabel marks a child PDB with the name of its DPDB.
const ChildLabel = "policy.kubesim.io/dpdb"

func childSpec(d *policyv1alpha1.DistributedPodDisruptionBudget, minAvailable int32) policyv1.PodDisruptionBudgetSpec {
	v := intstrFromInt32(minAvailable)
	return policyv1.PodDisruptionBudgetSpec{Selector: d.Spec.Selector.DeepCopy(), MinAvailable: &v}
}

// writeStatus writes the DPDB's status if it changed.
func (c *Controller) writeStatus(ctx context.Context, d *policyv1alpha1.DistributedPodDisruptionBudget, st policyv1alpha1.DistributedPodDisruptionBudgetStatus) error {
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		return nil
	}
	updated := d.DeepCopy()
	updated.Status = st
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(updated)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(policyv1alpha1.GroupVersion)
	u.SetKind(policyv1alpha1.Kind)
	_, err = c.dyn.Resource(policyv1alpha1.Resource).Namespace(d.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return err
}

// describe names the unsure members, for conditions and refusals.
func describe(views []memberView) string {
	var parts []string
	for _, v := range views {
		if !v.obs.Sure {
			parts = append(parts, v.member.String()+": "+v.message)
		}
	}
	return strings.Join(parts, "; ")
}

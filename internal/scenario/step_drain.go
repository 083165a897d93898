package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/drain"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/explain"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

func init() {
	stepKinds.register(&stepKind{
		name:     "drain",
		validate: func(s *v1alpha1.Step, _ clusterNames) error { return validateDrain(s.Drain) },
		timeout: func(s *v1alpha1.Step) time.Duration {
			if inWaves(s.Drain) {
				return nodesTimeout // many nodes, one wave after another
			}
			return defaultStepTimeout
		},
		do:      func(x *stepRun) (string, error) { return x.t.drain(x.ctx, x.step.Drain, x.timeout, x.result) },
		picture: zoneGrouping,
	})
}

func validateDrain(d *v1alpha1.DrainStep) error {
	// expect's values are checked with the other enums (enums.go).
	if named(d.Node) && named(d.Nodes) {
		return fmt.Errorf("node and nodes: give one of them (they mean the same)")
	}
	if d.MaxUnavailable < 0 {
		return fmt.Errorf("maxUnavailable: %d; give how many nodes a wave drains at once, 1 or more (0 or none: all at once)", d.MaxUnavailable)
	}
	if d.Surge != nil && d.Surge.Count < 1 {
		return fmt.Errorf("surge.count: %d; give how many nodes to add to node group %q before the first wave, 1 or more", d.Surge.Count, d.Surge.NodeGroup)
	}
	if !named(d.Targets()) {
		return fmt.Errorf("nodes: name the nodes to drain: a name, a list of names, or {selector: k=v}")
	}
	return validateNodes(d.Targets())
}

// checkSurgeGroups checks that each drain's surge names a node group of
// its cluster, when the scenario makes that cluster (a cluster used as it
// is has its groups checked when the drain runs).
func checkSurgeGroups(steps []v1alpha1.Step, path string, clusters map[string]*v1alpha1.ScenarioCluster) error {
	return eachStep(steps, path, func(s *v1alpha1.Step, at string) error {
		if s.Drain == nil || s.Drain.Surge == nil {
			return nil
		}
		c := clusters[s.Cluster]
		if c != nil && c.Existing == "" && !slices.ContainsFunc(c.NodeGroups, func(g v1alpha1.NodeGroup) bool { return g.Name == s.Drain.Surge.NodeGroup }) {
			return errAt(s.Line, "%s.drain.surge.nodeGroup: no node group %q in the cluster; declare it under nodeGroups (count: 0 will do)", at, s.Drain.Surge.NodeGroup)
		}
		return nil
	})
}

func named(n v1alpha1.NodeRef) bool { return len(n.Names) > 0 || n.Selector != "" }

// inWaves: a drain that adds nodes or drains a few at a time.
func inWaves(d *v1alpha1.DrainStep) bool { return d.MaxUnavailable > 0 || d.Surge != nil }

// drainer is kubectl's drain helper as `kubectl drain` sets it up with
// the step's flags (each defaulting to true: --force, --ignore-daemonsets,
// --delete-emptydir-data): it chooses a node's pods and evicts them.
func (t *target) drainer(ctx context.Context, s *v1alpha1.DrainStep) *drain.Helper {
	return &drain.Helper{
		Ctx: ctx, Client: t.client,
		Force:               orTrue(s.Force),
		IgnoreAllDaemonSets: orTrue(s.IgnoreDaemonSets),
		DeleteEmptyDirData:  orTrue(s.DeleteEmptyDirData),
		GracePeriodSeconds:  -1, // each pod's own
		Out:                 io.Discard, ErrOut: io.Discard,
	}
}

func orTrue(b *bool) bool { return b == nil || *b }

// evictable are the pods on a node kubectl's drain would evict, by name;
// an error where it would refuse to drain the node (a pod no controller
// recreates without force, one with emptyDir data without
// deleteEmptyDirData, a DaemonSet's without ignoreDaemonSets), in its words.
func evictable(h *drain.Helper, node string) ([]corev1.Pod, error) {
	list, errs := h.GetPodsForDeletion(node)
	if len(errs) > 0 {
		return nil, fmt.Errorf("kubectl drain would refuse node %s: %w (the step's force, ignoreDaemonSets and deleteEmptyDirData are its flags)", node, errors.Join(errs...))
	}
	pods := list.Pods()
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, nil
}

// evict asks the eviction API, through kubectl's drain helper, to evict a
// pod: nil, a refusal (a budget's or a webhook's words), or another error.
// A throttle (429 with Retry-After and no budget named: the API server's
// priority and fairness) is no refusal: it is waited out and asked again.
func (t *target) evict(ctx context.Context, h *drain.Helper, p corev1.Pod) (refusal string, err error) {
	for {
		err = h.EvictPod(p, policyv1.SchemeGroupVersion)
		switch {
		case err == nil, apierrors.IsNotFound(err):
			t.evicted[p.Namespace+"/"+p.Name] = true
			return "", nil
		case apierrors.IsTooManyRequests(err):
			wait, throttled := throttle(err)
			if !throttled {
				return refusalWords(err), nil
			}
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		return "", err
	}
}

// throttle tells a 429 that asks to come back later from a refusal: a
// budget's carries a DisruptionBudget cause, a webhook's (dpdb's) no
// Retry-After; the API server's priority and fairness sends Retry-After.
func throttle(err error) (time.Duration, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return 0, false
	}
	d := status.Status().Details
	if d == nil || d.RetryAfterSeconds <= 0 {
		return 0, false
	}
	for _, c := range d.Causes {
		if c.Type == policyv1.DisruptionBudgetCause {
			return 0, false
		}
	}
	return time.Duration(d.RetryAfterSeconds) * time.Second, true
}

// refusalWords are a refused eviction's most telling words: the budget's
// cause ("The disruption budget web needs 2 healthy pods and has 2
// currently"), else the refusal's message.
func refusalWords(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				if c.Message != "" {
					return c.Message
				}
			}
		}
	}
	return err.Error()
}

// drainRun is one drain step as it runs, across its waves.
type drainRun struct {
	t       *target
	h       *drain.Helper
	d       *disruption     // what evictions assertions read
	made    map[string]bool // pods evicted, of every wave
	timeout time.Duration
	blocked bool // expect: blocked
}

// drain grows the surge's node group, then drains the nodes wave by wave;
// see DrainStep. What it did goes into res.Drain, and the pods then left
// Pending with the scheduler's reasons, even when it fails.
func (t *target) drain(ctx context.Context, s *v1alpha1.DrainStep, timeout time.Duration, res *result.Step) (string, error) {
	names, err := t.nodes(ctx, s.Targets())
	if err != nil {
		return "", err
	}
	var group *v1alpha1.NodeGroup
	now := 0
	if s.Surge != nil {
		if group, now, err = t.groupSize(ctx, s.Surge.NodeGroup); err != nil {
			return "", err
		}
	}
	plan := planDrain(s, names, group, now)
	rec := &result.Drain{Planned: len(plan.waves)}
	res.Drain = rec
	dr := &drainRun{t: t, h: t.drainer(ctx, s), d: &disruption{What: "drain " + strings.Join(names, ",")}, made: map[string]bool{}, timeout: timeout, blocked: s.Expect == "blocked"}
	t.last = dr.d
	blocked, err := dr.run(ctx, plan, rec)
	rec.Pending = t.leftPending(ctx)
	summary := dr.summary(rec)
	if err == nil && dr.blocked && !blocked {
		err = fmt.Errorf("expected the drain to be blocked, but every eviction was allowed (%s)", summary)
	}
	return summary, err
}

// groupSize finds a scenario cluster's node group and the nodes it has
// now (its highest number, plus one).
func (t *target) groupSize(ctx context.Context, name string) (*v1alpha1.NodeGroup, int, error) {
	for i := range t.spec.NodeGroups {
		g := &t.spec.NodeGroups[i]
		if g.Name != name {
			continue
		}
		list, err := t.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.NodeGroupLabel + "=" + g.LabelValue()})
		if err != nil {
			return nil, 0, err
		}
		now := 0
		for _, n := range list.Items {
			if i, ok := g.NodeIndex(n.Name); ok {
				now = max(now, i+1)
			}
		}
		return g, now, nil
	}
	return nil, 0, fmt.Errorf("surge.nodeGroup: no node group %q in the scenario's cluster; declare it under nodeGroups (count: 0 will do)", name)
}

// run makes the surge's nodes, then drains each wave; blocked reports that
// a wave was refused with expect: blocked, which ends the drain there.
func (dr *drainRun) run(ctx context.Context, plan drainPlan, rec *result.Drain) (blocked bool, err error) {
	if plan.surge != nil {
		started := time.Now()
		nodes := plan.surgeNodes()
		rec.Surge = &result.Surge{NodeGroup: plan.surge.Name, Nodes: nodes}
		if _, err := dr.t.scaleGroup(ctx, plan.surge, plan.surgeTo); err != nil {
			return false, err
		}
		err := dr.t.waitNodesReady(ctx, nodes, dr.timeout)
		rec.Surge.Duration = time.Since(started)
		if err != nil {
			return false, fmt.Errorf("surge: %w", err)
		}
	}
	for i, nodes := range plan.waves {
		rec.Waves = append(rec.Waves, result.Wave{Nodes: nodes})
		w := &rec.Waves[len(rec.Waves)-1]
		blocked, err := dr.wave(ctx, nodes, w, fmt.Sprintf("wave %d/%d (%s)", i+1, len(plan.waves), strings.Join(nodes, " ")))
		if err != nil || blocked {
			return blocked, err
		}
	}
	return false, nil
}

// wave cordons its nodes, evicts their pods (retrying refusals each
// second, each refusal recorded once with its budget and how long it
// lasted) and waits until the evicted pods are gone and their
// replacements are Running elsewhere. With expect: blocked each pod is
// tried once, and a refusal ends the wave (blocked).
func (dr *drainRun) wave(ctx context.Context, nodes []string, w *result.Wave, which string) (blocked bool, err error) {
	t := dr.t
	started := time.Now()
	defer func() { w.Duration = time.Since(started) }()
	if _, err := t.setUnschedulable(ctx, v1alpha1.NodeRef{Names: nodes}, true); err != nil {
		return false, err
	}
	// The pods there before the wave, so that a replacement is a pod that
	// was not (a StatefulSet's has the same name, not the same uid).
	before, err := t.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	existed := map[types.UID]bool{}
	for _, p := range before.Items {
		existed[p.UID] = true
	}
	owners := map[types.UID]*owed{} // evicted pods per controller
	first := map[string]time.Time{}
	at := map[string]int{} // a refused pod's index in w.Refusals
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	for {
		refused := map[string]string{}
		for _, n := range nodes {
			pods, err := evictable(dr.h, n)
			if err != nil {
				return false, dr.orNotDone(ctx, which, refused, err)
			}
			for _, p := range pods {
				key := p.Namespace + "/" + p.Name
				if dr.made[key] {
					continue
				}
				msg, err := t.evict(ctx, dr.h, p)
				if err != nil {
					return false, dr.orNotDone(ctx, which, refused, fmt.Errorf("evicting %s: %w", key, err))
				}
				now := time.Now()
				if msg != "" {
					if _, seen := first[key]; !seen {
						first[key], at[key] = now, len(w.Refusals)
						w.Refusals = append(w.Refusals, result.Refusal{Pod: key, PDB: t.budgetsOf(&p), Message: msg})
					}
					w.Refusals[at[key]].For = now.Sub(first[key])
					refused[key] = msg
					continue
				}
				dr.made[key] = true
				w.Evicted = append(w.Evicted, key)
				if i, ok := at[key]; ok {
					w.Refusals[i].For, w.Refusals[i].Evicted = now.Sub(first[key]), true
				}
				if c := metav1.GetControllerOf(&p); c != nil {
					if owners[c.UID] == nil {
						owners[c.UID] = &owed{name: fmt.Sprintf("%s %s/%s", strings.ToLower(c.Kind), p.Namespace, c.Name)}
					}
					owners[c.UID].pods++
				}
			}
		}
		dr.d.Made, dr.d.Refused = sortedKeys(dr.made), sortedKeys(refused)
		if dr.blocked && len(refused) > 0 {
			return true, nil
		}
		if len(refused) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return false, dr.orNotDone(ctx, which, refused, ctx.Err())
		case <-retry.C:
		}
	}
	return false, dr.settle(ctx, nodes, existed, owners, which)
}

// orNotDone is err, unless the step's time ran out: then the drain's own
// word for it, naming the wave and a refusal.
func (dr *drainRun) orNotDone(ctx context.Context, which string, refused map[string]string, err error) error {
	if ctx.Err() == nil || context.Cause(ctx) != errStepTimedOut {
		return err
	}
	msg := fmt.Sprintf("drain did not complete in %s: %s: %d evicted, %d refused", dr.timeout, which, len(dr.made), len(refused))
	if len(refused) > 0 {
		msg += " (" + firstValue(refused) + ")"
	}
	return &timeoutReport{msg}
}

// settle waits, watching, until the wave's evicted pods are gone from its
// nodes and each controller that lost pods has as many new ones Running
// (or Succeeded) elsewhere, or found unschedulable: those are left
// Pending, and the report says why.
func (dr *drainRun) settle(ctx context.Context, nodes []string, existed map[types.UID]bool, owners map[types.UID]*owed, which string) error {
	onWave := map[string]bool{}
	for _, n := range nodes {
		onWave[n] = true
	}
	lister := dr.t.factory.Core().V1().Pods().Lister()
	remaining := dr.timeout
	if d, ok := ctx.Deadline(); ok {
		remaining = time.Until(d)
	}
	var state string
	err := dr.t.until(ctx, remaining, func() (bool, string) {
		pods, err := lister.List(labels.Everything())
		if err != nil {
			return false, err.Error()
		}
		left, done := 0, map[types.UID]int{}
		for _, p := range pods {
			if onWave[p.Spec.NodeName] {
				if dr.made[p.Namespace+"/"+p.Name] {
					left++ // evicted, not gone yet
				}
				continue
			}
			c := metav1.GetControllerOf(p)
			if c == nil || owners[c.UID] == nil || existed[p.UID] || p.DeletionTimestamp != nil {
				continue
			}
			if runningReady(p) || p.Status.Phase == corev1.PodSucceeded || unschedulable(p) {
				done[c.UID]++
			}
		}
		var waiting []string
		for uid, o := range owners {
			if n := o.pods - done[uid]; n > 0 {
				waiting = append(waiting, fmt.Sprintf("%s (%d)", o.name, n))
			}
		}
		sort.Strings(waiting)
		state = fmt.Sprintf("%d pods still on the wave's nodes; replacements not yet Running: %s", left, orNone(strings.Join(waiting, ", ")))
		return left == 0 && len(waiting) == 0, state
	})
	if err != nil && ctx.Err() != nil {
		return &timeoutReport{fmt.Sprintf("drain did not complete in %s: %s: %s", dr.timeout, which, state)}
	}
	return err
}

// owed is a controller that lost pods to a wave: how many, and its name
// for messages ("replicaset shop/web-5d8f").
type owed struct {
	name string
	pods int
}

func runningReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// unschedulable: the scheduler has tried the pod and found no node, or
// it waits on its scheduling gates.
func unschedulable(p *corev1.Pod) bool {
	if p.Spec.NodeName != "" {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason == corev1.PodReasonUnschedulable || c.Reason == corev1.PodReasonSchedulingGated
		}
	}
	return false
}

// budgetsOf names the PodDisruptionBudgets whose selector picks the pod
// (the eviction API refuses for them); "" for none.
func (t *target) budgetsOf(p *corev1.Pod) string {
	pdbs, err := t.factory.Policy().V1().PodDisruptionBudgets().Lister().PodDisruptionBudgets(p.Namespace).List(labels.Everything())
	if err != nil {
		return ""
	}
	var names []string
	for _, b := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(p.Labels)) {
			names = append(names, b.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// maxPendingExplained bounds the scheduler records a drain's report asks
// for; the pods beyond it get their PodScheduled condition's words, which
// are the scheduler's too.
const maxPendingExplained = 100

// leftPending are the cluster's Pending pods, each with the scheduler's
// reason, by namespace/name. It still asks when the step's time is up:
// what was left is the drain's result.
func (t *target) leftPending(ctx context.Context) []result.PendingPod {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), pictureTimeout)
		defer cancel()
	}
	list, err := t.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
	if err != nil {
		return []result.PendingPod{{Pod: "(pods not listed)", Reason: err.Error()}}
	}
	pods := list.Items
	sort.Slice(pods, func(i, j int) bool {
		return pods[i].Namespace+"/"+pods[i].Name < pods[j].Namespace+"/"+pods[j].Name
	})
	var out []result.PendingPod
	for i := range pods {
		p := &pods[i]
		if p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
			continue
		}
		reason := ""
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				reason = c.Message
			}
		}
		if t.explainer != nil && len(out) < maxPendingExplained {
			if e, err := t.explainer.Pod(ctx, p.Namespace, p.Name); err == nil && e.UID == string(p.UID) && e.Result != explain.Scheduled && e.Message != "" {
				reason = e.Message
			}
		}
		if reason == "" {
			reason = "not yet tried by the scheduler"
		}
		out = append(out, result.PendingPod{Pod: p.Namespace + "/" + p.Name, Reason: reason})
	}
	return out
}

// summary is the drain step's one line.
func (dr *drainRun) summary(rec *result.Drain) string {
	refusals, still := 0, len(dr.d.Refused)
	for _, w := range rec.Waves {
		refusals += len(w.Refusals)
	}
	if dr.blocked || still > 0 {
		return fmt.Sprintf("%d evicted, %d refused", len(dr.made), still)
	}
	parts := []string{fmt.Sprintf("%d evicted", len(dr.made))}
	if rec.Planned > 1 {
		parts[0] += fmt.Sprintf(" in %d waves", len(rec.Waves))
	}
	if refusals > 0 {
		parts = append(parts, fmt.Sprintf("%d refused for a while", refusals))
	}
	if len(rec.Pending) > 0 {
		parts = append(parts, fmt.Sprintf("%d left Pending", len(rec.Pending)))
	}
	return strings.Join(parts, ", ")
}

func firstValue(m map[string]string) string {
	for _, k := range sortedKeys(m) {
		return k + ": " + m[k]
	}
	return ""
}

package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	kwokv1alpha1 "sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// What follows reads Karpenter's own state — its events, its NodeClaims'
// conditions, its NodePools — and says what it says. It decides nothing
// Karpenter decides: where a rule of Karpenter's is applied (when
// consolidateAfter elapses), it is applied to Karpenter's own fields, and
// says so.

var (
	nodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	nodePools  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
)

// conditionTransitioned begins the events operatorpkg's status controller
// writes for each condition change of Karpenter's objects.
const conditionTransitioned = "Status condition transitioned"

// karpenterComponent is the source its events carry: its operator's
// recorder is named after the app (operator.AppName).
const karpenterComponent = "karpenter"

// Karpenter is the cluster's Karpenter as explain reads it.
type Karpenter struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

// NewKarpenter reads Karpenter's state through these clients.
func NewKarpenter(kube kubernetes.Interface, dyn dynamic.Interface) *Karpenter {
	return &Karpenter{kube: kube, dyn: dyn}
}

// Runs reports whether the cluster has Karpenter's API: a cluster made
// without --autoscaler has none of its CRDs.
func (k *Karpenter) Runs(ctx context.Context) (bool, error) {
	_, err := k.dyn.Resource(nodePools).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// Event is one of Karpenter's events, as it wrote it.
type Event struct {
	Time time.Time `json:"time"`
	// On is the object it is about: pod, node, nodeclaim or nodepool, and
	// its name.
	On      string `json:"on"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Count   int32  `json:"count,omitempty"`
}

// Condition is a condition of a NodeClaim.
type Condition struct {
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since"`
}

// NodeClaim is what Karpenter's NodeClaim says of its node.
type NodeClaim struct {
	Name         string `json:"name"`
	NodePool     string `json:"nodePool,omitempty"`
	InstanceType string `json:"instanceType,omitempty"`
	Node         string `json:"node,omitempty"`
	// Conditions are Launched, Registered and Initialized, then the rest
	// Karpenter set (Consolidatable, Drifted, DisruptionReason…).
	Conditions   []Condition `json:"conditions"`
	LastPodEvent *time.Time  `json:"lastPodEvent,omitempty"`
	Deleting     *time.Time  `json:"deleting,omitempty"`
	// Missing: the NodeClaim named no longer exists.
	Missing bool `json:"missing,omitempty"`
}

// Condition returns the condition of type t.
func (c *NodeClaim) Condition(t string) (Condition, bool) {
	for _, cond := range c.Conditions {
		if cond.Type == t {
			return cond, true
		}
	}
	return Condition{}, false
}

// KarpenterPod is Karpenter's view of a Pending pod.
type KarpenterPod struct {
	// Event is Karpenter's newest event on the pod: FailedScheduling, why
	// it launches no NodeClaim for it, or Nominated, where it expects the
	// pod to go.
	Event *Event `json:"event,omitempty"`
	// NodeClaim is the NodeClaim a Nominated event names.
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// Note says what there is not: no event of Karpenter's on the pod.
	Note string `json:"note,omitempty"`
}

// AddTo adds Karpenter's view to the explanation of a pod the scheduler
// did not place.
func (k *Karpenter) AddTo(ctx context.Context, e *Explanation) error {
	if e.Result == Scheduled || e.Result == BoundDirectly {
		return nil
	}
	var err error
	e.Karpenter, err = k.Pod(ctx, e.Namespace, e.Name)
	return err
}

// Pod returns Karpenter's view of a pod not bound to a node; nil when the
// pod is bound, or when the cluster runs no Karpenter.
func (k *Karpenter) Pod(ctx context.Context, namespace, name string) (*KarpenterPod, error) {
	if runs, err := k.Runs(ctx); !runs {
		return nil, err
	}
	pod, err := k.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil || pod.Spec.NodeName != "" {
		return nil, err
	}
	evs, err := k.events(ctx, namespace, "pod", pod.Name, pod.UID)
	if err != nil {
		return nil, err
	}
	var newest *Event
	for i := range evs {
		if evs[i].Reason == "FailedScheduling" || evs[i].Reason == "Nominated" {
			newest = &evs[i]
		}
	}
	if newest == nil {
		// Karpenter acts on pods kube-scheduler has marked Unschedulable, in
		// batches: a pod just made may not have been through it yet.
		return &KarpenterPod{Note: "Karpenter has written no event about this pod (yet): it considers a pod once kube-scheduler has marked it Unschedulable, " +
			"and the API server keeps events for an hour"}, nil
	}
	out := &KarpenterPod{Event: newest}
	if newest.Reason == "Nominated" {
		if claim := nominated(newest.Message, "nodeclaim/"); claim != "" {
			if out.NodeClaim, err = k.nodeClaim(ctx, claim); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// nominated returns the name after prefix in a Nominated event's message,
// "Pod should schedule on: nodeclaim/NAME, node/NAME" (either may be absent).
func nominated(message, prefix string) string {
	_, list, ok := strings.Cut(message, ":")
	if !ok {
		return ""
	}
	for _, item := range strings.Split(list, ",") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(item), prefix); ok {
			return name
		}
	}
	return ""
}

// events are Karpenter's events on one object, oldest first. Karpenter
// writes events of a cluster-scoped object (node, NodeClaim, NodePool) to
// the default namespace: namespace "" finds them wherever they are.
func (k *Karpenter) events(ctx context.Context, namespace, kind, name string, uid types.UID) ([]Event, error) {
	list, err := k.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.uid": string(uid)}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s %s's events: %w", kind, name, err)
	}
	var out []Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.UID != uid || ev.Source.Component != karpenterComponent && ev.ReportingController != karpenterComponent {
			continue
		}
		out = append(out, Event{Time: lastSeen(ev), On: kind + "/" + name, Type: ev.Type, Reason: ev.Reason,
			Message: strings.TrimSpace(ev.Message), Count: max(ev.Count, 1)})
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Time.Compare(b.Time) })
	return out, nil
}

// lastSeen is when an event last happened: a repeated event's last time.
func lastSeen(ev corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	}
	return eventTime(ev)
}

// nodeClaim reads a NodeClaim by name; Missing when it is gone.
func (k *Karpenter) nodeClaim(ctx context.Context, name string) (*NodeClaim, error) {
	u, err := k.dyn.Resource(nodeClaims).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &NodeClaim{Name: name, Missing: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading NodeClaim %s: %w", name, err)
	}
	nc := &karpenterv1.NodeClaim{}
	if err := convert(u.Object, nc); err != nil {
		return nil, fmt.Errorf("reading NodeClaim %s: %w", name, err)
	}
	return claimOf(nc), nil
}

// convert decodes an object read through the dynamic client into
// Karpenter's type by its JSON, so its own decoders run (consolidateAfter:
// Never is a NillableDuration's).
func convert(obj map[string]any, into any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// launchOrder are the conditions a NodeClaim passes on its way to a node.
var launchOrder = []string{karpenterv1.ConditionTypeLaunched, karpenterv1.ConditionTypeRegistered, karpenterv1.ConditionTypeInitialized}

func claimOf(nc *karpenterv1.NodeClaim) *NodeClaim {
	out := &NodeClaim{
		Name:         nc.Name,
		NodePool:     nc.Labels[karpenterv1.NodePoolLabelKey],
		InstanceType: nc.Labels[corev1.LabelInstanceTypeStable],
		Node:         nc.Status.NodeName,
		Conditions:   []Condition{},
	}
	if !nc.Status.LastPodEventTime.IsZero() {
		out.LastPodEvent = &nc.Status.LastPodEventTime.Time
	}
	if nc.DeletionTimestamp != nil {
		out.Deleting = &nc.DeletionTimestamp.Time
	}
	rank := func(t string) int {
		if i := slices.Index(launchOrder, t); i >= 0 {
			return i
		}
		return len(launchOrder)
	}
	for _, c := range nc.Status.Conditions {
		out.Conditions = append(out.Conditions, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: c.LastTransitionTime.Time})
	}
	slices.SortStableFunc(out.Conditions, func(a, b Condition) int { return rank(a.Type) - rank(b.Type) })
	return out
}

// NodeExplanation is what `kubesim explain node` says of a node.
type NodeExplanation struct {
	Name string `json:"name"`
	// ManagedBy is "karpenter" for a node of a Karpenter NodeClaim, empty
	// for any other node, for which Note says why.
	ManagedBy string `json:"managedBy,omitempty"`
	Note      string `json:"note,omitempty"`

	Ready         string     `json:"ready"` // the Ready condition's status
	Unschedulable bool       `json:"unschedulable,omitempty"`
	Taints        []string   `json:"taints,omitempty"`
	Pods          int        `json:"pods"`
	Created       time.Time  `json:"created"`
	Deleting      *time.Time `json:"deleting,omitempty"`
	ProviderID    string     `json:"providerID,omitempty"`

	// From the node's labels, as Karpenter's provider wrote them.
	InstanceType string `json:"instanceType,omitempty"`
	CapacityType string `json:"capacityType,omitempty"`
	Zone         string `json:"zone,omitempty"`
	// Price is the offering's price per hour (eks-node-viewer/instance-price):
	// the catalog's, not a bill.
	Price string `json:"price,omitempty"`

	NodeClaim     *NodeClaim       `json:"nodeClaim,omitempty"`
	NodePool      *NodePoolSummary `json:"nodePool,omitempty"`
	Consolidation *Consolidation   `json:"consolidation,omitempty"`
	// Disrupting says what marks the node as being disrupted: the
	// karpenter.sh/disrupted taint, a deletion, the NodeClaim's
	// DisruptionReason.
	Disrupting []string `json:"disrupting,omitempty"`
	// DoNotDisrupt are the node's pods annotated karpenter.sh/do-not-disrupt.
	DoNotDisrupt []string `json:"doNotDisrupt,omitempty"`
	// Events are Karpenter's newest event of each reason on the node and
	// its NodeClaim (but the condition changes the NodeClaim's conditions
	// show), and its newest DisruptionBlocked on the NodePool (a budget),
	// oldest first.
	Events []Event `json:"events,omitempty"`
}

// NodePoolSummary is the part of a NodePool that decides disruption.
type NodePoolSummary struct {
	Name                string            `json:"name"`
	Missing             bool              `json:"missing,omitempty"`
	ConsolidationPolicy string            `json:"consolidationPolicy,omitempty"`
	ConsolidateAfter    string            `json:"consolidateAfter,omitempty"`
	Budgets             []string          `json:"budgets,omitempty"`
	Limits              map[string]string `json:"limits,omitempty"`
}

// Consolidation is the NodeClaim's Consolidatable condition, or why it
// has none.
type Consolidation struct {
	// Consolidatable is the condition's status, "" without one.
	Consolidatable string     `json:"consolidatable"`
	Since          *time.Time `json:"since,omitempty"`
	// After is when consolidateAfter elapses, counted as Karpenter counts
	// it: from the NodeClaim's last pod event, else from its
	// initialization.
	After *time.Time `json:"after,omitempty"`
	// Note says it in words.
	Note string `json:"note"`
}

// Node explains a node; now is the cluster's time.
func (k *Karpenter) Node(ctx context.Context, name string, now time.Time) (*NodeExplanation, error) {
	node, err := k.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("node %q not found (kubectl get nodes lists them)", name)
	}
	if err != nil {
		return nil, err
	}
	x, err := k.basic(ctx, node)
	if err != nil {
		return nil, err
	}
	runs, err := k.Runs(ctx)
	if err != nil {
		return nil, err
	}
	pool := node.Labels[karpenterv1.NodePoolLabelKey]
	if !runs {
		x.Note = "no autoscaler manages this node: the cluster runs none"
		if pool != "" {
			x.Note = fmt.Sprintf("no autoscaler manages this node: it is labelled for NodePool %q, but the cluster runs no Karpenter", pool)
		}
		return x, nil
	}
	claim, err := k.claimOfNode(ctx, node)
	if err != nil {
		return nil, err
	}
	if claim == nil {
		x.Note = "no autoscaler manages this node: no NodeClaim of Karpenter's has its providerID"
		if pool != "" {
			x.Note = fmt.Sprintf("no autoscaler manages this node: it is labelled for NodePool %q, but no NodeClaim has its providerID", pool)
		}
		return x, nil
	}
	x.ManagedBy = karpenterComponent
	x.NodeClaim = claimOf(claim)
	if pool == "" {
		pool = x.NodeClaim.NodePool
	}
	np, poolUID, err := k.nodePool(ctx, pool)
	if err != nil {
		return nil, err
	}
	x.NodePool = summarize(pool, np)
	x.Consolidation = consolidation(np, x.NodeClaim, now)
	x.Disrupting = disrupting(node, x.NodeClaim)

	onNode, err := k.events(ctx, "", "node", node.Name, node.UID)
	if err != nil {
		return nil, err
	}
	onClaim, err := k.events(ctx, "", "nodeclaim", claim.Name, claim.UID)
	if err != nil {
		return nil, err
	}
	var disruption []Event
	for _, ev := range append(onNode, onClaim...) {
		// Its status controllers also write an event for each condition
		// that changes: the conditions are shown as they are.
		if !strings.HasPrefix(ev.Message, conditionTransitioned) {
			disruption = append(disruption, ev)
		}
	}
	x.Events = newestByReason(disruption)
	if np != nil {
		onPool, err := k.events(ctx, "", "nodepool", pool, poolUID)
		if err != nil {
			return nil, err
		}
		var blocked []Event
		for _, ev := range onPool {
			if ev.Reason == "DisruptionBlocked" {
				blocked = append(blocked, ev)
			}
		}
		x.Events = append(x.Events, newestByReason(blocked)...)
		slices.SortStableFunc(x.Events, func(a, b Event) int { return a.Time.Compare(b.Time) })
	}
	return x, nil
}

// basic is what any node has: readiness, taints, pods, age, labels.
func (k *Karpenter) basic(ctx context.Context, node *corev1.Node) (*NodeExplanation, error) {
	x := &NodeExplanation{
		Name:          node.Name,
		Ready:         string(corev1.ConditionUnknown),
		Unschedulable: node.Spec.Unschedulable,
		Created:       node.CreationTimestamp.Time,
		ProviderID:    node.Spec.ProviderID,
		InstanceType:  node.Labels[corev1.LabelInstanceTypeStable],
		CapacityType:  node.Labels[karpenterv1.CapacityTypeLabelKey],
		Zone:          node.Labels[corev1.LabelTopologyZone],
		Price:         node.Labels[kwokv1alpha1.NodeViewerLabelKey],
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			x.Ready = string(c.Status)
		}
	}
	for _, t := range node.Spec.Taints {
		x.Taints = append(x.Taints, t.ToString())
	}
	if node.DeletionTimestamp != nil {
		x.Deleting = &node.DeletionTimestamp.Time
	}
	pods, err := k.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node.Name).String()})
	if err != nil {
		return nil, fmt.Errorf("listing node %s's pods: %w", node.Name, err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		x.Pods++
		if p.Annotations[karpenterv1.DoNotDisruptAnnotationKey] == "true" {
			x.DoNotDisrupt = append(x.DoNotDisrupt, p.Namespace+"/"+p.Name)
		}
	}
	return x, nil
}

// claimOfNode finds the node's NodeClaim as Karpenter pairs them: by
// providerID.
func (k *Karpenter) claimOfNode(ctx context.Context, node *corev1.Node) (*karpenterv1.NodeClaim, error) {
	if node.Spec.ProviderID == "" {
		return nil, nil
	}
	list, err := k.dyn.Resource(nodeClaims).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	for _, u := range list.Items {
		nc := &karpenterv1.NodeClaim{}
		if err := convert(u.Object, nc); err != nil {
			return nil, fmt.Errorf("reading NodeClaim %s: %w", u.GetName(), err)
		}
		if nc.Status.ProviderID == node.Spec.ProviderID {
			return nc, nil
		}
	}
	return nil, nil
}

// nodePool reads a NodePool; nil when it is gone.
func (k *Karpenter) nodePool(ctx context.Context, name string) (*karpenterv1.NodePool, types.UID, error) {
	if name == "" {
		return nil, "", nil
	}
	u, err := k.dyn.Resource(nodePools).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading NodePool %s: %w", name, err)
	}
	np := &karpenterv1.NodePool{}
	if err := convert(u.Object, np); err != nil {
		return nil, "", fmt.Errorf("reading NodePool %s: %w", name, err)
	}
	return np, np.UID, nil
}

func summarize(name string, np *karpenterv1.NodePool) *NodePoolSummary {
	if np == nil {
		return &NodePoolSummary{Name: name, Missing: true}
	}
	d := np.Spec.Disruption
	s := &NodePoolSummary{Name: np.Name, ConsolidationPolicy: string(d.ConsolidationPolicy), ConsolidateAfter: karpenterv1.Never}
	if d.ConsolidateAfter.Duration != nil {
		s.ConsolidateAfter = d.ConsolidateAfter.Duration.String()
	}
	for _, b := range d.Budgets {
		text := "nodes " + b.Nodes
		if len(b.Reasons) > 0 {
			var reasons []string
			for _, r := range b.Reasons {
				reasons = append(reasons, string(r))
			}
			text += " for " + strings.Join(reasons, ",")
		}
		if b.Schedule != nil {
			text += fmt.Sprintf(" on schedule %q", *b.Schedule)
			if b.Duration != nil {
				text += " for " + b.Duration.Duration.String()
			}
		}
		s.Budgets = append(s.Budgets, text)
	}
	if len(np.Spec.Limits) > 0 {
		s.Limits = map[string]string{}
		for r, q := range np.Spec.Limits {
			s.Limits[string(r)] = q.String()
		}
	}
	return s
}

// consolidation reads the NodeClaim's Consolidatable condition. Without
// one, it says why, by the rule of Karpenter's own NodeClaim controller
// (nodeclaim/disruption/consolidation.go): none while consolidateAfter is
// Never, none before Initialized, none until consolidateAfter has passed
// since the last pod event (else since initialization).
func consolidation(np *karpenterv1.NodePool, nc *NodeClaim, now time.Time) *Consolidation {
	if c, ok := nc.Condition(karpenterv1.ConditionTypeConsolidatable); ok {
		since := c.Since
		note := "consolidateAfter has passed, so consolidation may remove or replace it; Karpenter's events below say what it decided"
		if c.Status != string(metav1.ConditionTrue) {
			note = fmt.Sprintf("Consolidatable is %s: %s", c.Status, c.Message)
		}
		return &Consolidation{Consolidatable: c.Status, Since: &since, Note: note}
	}
	if np == nil {
		return &Consolidation{Note: "its NodePool is gone"}
	}
	after := np.Spec.Disruption.ConsolidateAfter.Duration
	if after == nil {
		return &Consolidation{Note: "the NodePool's consolidateAfter is Never: Karpenter does not consolidate its nodes"}
	}
	initialized, ok := nc.Condition(karpenterv1.ConditionTypeInitialized)
	if !ok || initialized.Status != string(metav1.ConditionTrue) {
		return &Consolidation{Note: "not Initialized yet: Karpenter marks a NodeClaim Consolidatable only once it is"}
	}
	from, what := initialized.Since, "its initialization"
	if nc.LastPodEvent != nil {
		from, what = *nc.LastPodEvent, "the last pod event on it"
	}
	at := from.Add(*after)
	if now.Before(at) {
		return &Consolidation{After: &at, Note: fmt.Sprintf("consolidateAfter (%s) elapses at %s, in %s (counted from %s at %s)",
			after, clock(at), at.Sub(now).Round(time.Second), what, clock(from))}
	}
	return &Consolidation{After: &at, Note: fmt.Sprintf("consolidateAfter (%s) elapsed at %s; Karpenter has not marked it Consolidatable yet", after, clock(at))}
}

func disrupting(node *corev1.Node, nc *NodeClaim) []string {
	var out []string
	for _, t := range node.Spec.Taints {
		if t.Key == karpenterv1.DisruptedTaintKey {
			out = append(out, "tainted "+t.ToString()+" (Karpenter is disrupting it)")
		}
	}
	if c, ok := nc.Condition(karpenterv1.ConditionTypeDisruptionReason); ok && c.Status == string(metav1.ConditionTrue) {
		out = append(out, "NodeClaim DisruptionReason: "+strings.TrimSpace(c.Reason+" "+c.Message))
	}
	if node.DeletionTimestamp != nil {
		out = append(out, "node deleted at "+clock(node.DeletionTimestamp.Time)+", draining")
	}
	if nc.Deleting != nil {
		out = append(out, "NodeClaim deleted at "+clock(*nc.Deleting))
	}
	return out
}

// newestByReason keeps the newest event of each reason; of one reason and
// message on the node and on its NodeClaim (Karpenter writes both), the
// node's.
func newestByReason(evs []Event) []Event {
	newest := map[string]Event{}
	for _, ev := range evs {
		if old, ok := newest[ev.Reason]; !ok || ev.Time.After(old.Time) ||
			(ev.Time.Equal(old.Time) && old.Message == ev.Message && strings.HasPrefix(ev.On, "node/")) {
			newest[ev.Reason] = ev
		}
	}
	out := slices.Collect(maps.Values(newest))
	slices.SortStableFunc(out, func(a, b Event) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return out
}

func clock(t time.Time) string { return t.Local().Format(time.TimeOnly) }

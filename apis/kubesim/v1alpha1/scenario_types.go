package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScenarioKind is the kind of a scenario file (`kubesim run FILE`).
const ScenarioKind = "Scenario"

// Scenario is a scheduling experiment as a file: the clusters it needs,
// the steps to run on them, and what must hold along the way. Text of the
// form ${name} is replaced by a parameter or a foreach value before the
// file is read, so any field may use one.
//
// +kubebuilder:object:generate=false
type Scenario struct {
	metav1.TypeMeta `json:",inline"`

	// Name names the scenario in reports (default: the file's name).
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`

	// Parameters are the values ${name} stands for; `--set name=value`
	// overrides one.
	Parameters map[string]string `json:"parameters,omitempty"`

	// Cluster is the one cluster the steps run on; Clusters are several,
	// each named, that steps choose by `cluster:`. Set one or the other.
	Cluster  *ScenarioCluster  `json:"cluster,omitempty"`
	Clusters []ScenarioCluster `json:"clusters,omitempty"`

	Steps []Step `json:"steps"`
}

// ScenarioCluster is a cluster a scenario makes afresh (and deletes after),
// or an existing one it uses as it is.
//
// +kubebuilder:object:generate=false
type ScenarioCluster struct {
	// Name is how steps refer to this cluster (`cluster: NAME`); it is not
	// the name of the cluster made.
	Name string `json:"name,omitempty"`
	// Existing names a kubesim cluster to run on instead of making one;
	// `kubesim run --cluster NAME` sets it for a one-cluster scenario.
	Existing string `json:"existing,omitempty"`

	// ClusterSpec is the cluster's options, as in a Cluster file, but for
	// the few a scenario cannot set (internal/scenario's notInScenario says
	// which and why). Paths (from, auditPolicy, stageFiles, nodeGroups'
	// templates, kueueConfig, descheduler.policy, Karpenter's
	// instanceTypes) are relative to the scenario's file. NodeGroups' nodes are
	// made by the run once the cluster is up. TimeScale also puts the run's
	// own waits, sleeps and timeouts on the cluster's clock; a scenario's
	// clusters share one scale.
	ClusterSpec `json:",inline"`
}

// Step is one thing to do: exactly one of its actions (Apply to Federate)
// is set. What each action does is declared where scenarios run; adding
// one adds its field here.
//
// +kubebuilder:object:generate=false
type Step struct {
	Name string `json:"name,omitempty"`
	// Cluster names the scenario cluster the step acts on (default: the
	// only one). A foreach's name and cluster are its steps' defaults.
	Cluster string `json:"cluster,omitempty"`
	// ContinueOnError records the step's failure and goes on.
	ContinueOnError bool `json:"continueOnError,omitempty"`
	// Timeout bounds the step: it is stopped and fails when it runs out
	// (default 60s; a sleep's is its duration plus 60s, a deschedule's
	// and a node group scale's 3m).
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	Apply      *ApplyStep       `json:"apply,omitempty"`
	Delete     *ApplyStep       `json:"delete,omitempty"`
	Scale      *ScaleStep       `json:"scale,omitempty"`
	Usage      *UsageStep       `json:"usage,omitempty"`
	Label      *LabelStep       `json:"label,omitempty"`
	Taint      *TaintStep       `json:"taint,omitempty"`
	Cordon     *NodeRef         `json:"cordon,omitempty"`
	Uncordon   *NodeRef         `json:"uncordon,omitempty"`
	Drain      *DrainStep       `json:"drain,omitempty"`
	Evict      *EvictStep       `json:"evict,omitempty"`
	NodeStop   *NodeRef         `json:"nodeStop,omitempty"`
	NodeStart  *NodeRef         `json:"nodeStart,omitempty"`
	Deschedule *DescheduleStep  `json:"deschedule,omitempty"`
	Wait       *WaitStep        `json:"wait,omitempty"`
	Sleep      *metav1.Duration `json:"sleep,omitempty"`
	Assert     []Assertion      `json:"assert,omitempty"`
	Kubectl    Args             `json:"kubectl,omitempty"`
	Foreach    *ForeachStep     `json:"foreach,omitempty"`
	// Federate wires the named scenario clusters into one DPDB federation,
	// as `kubesim federate` does; the step names its clusters, so it takes
	// no `cluster:`.
	Federate []string `json:"federate,omitempty"`
	// KueueSimulate asks Kueue what it would do with a Job now, in a copy
	// of the cluster (kubesim kueue simulate): the cluster is not touched.
	KueueSimulate *KueueSimulateStep `json:"kueueSimulate,omitempty"`
	// Upgrade moves the cluster's control plane to the next Kubernetes
	// minor version, as `kubesim upgrade cluster` does, its workloads
	// running throughout.
	Upgrade *UpgradeStep `json:"upgrade,omitempty"`

	// Line is where the step starts in its file, for messages.
	Line int `json:"-"`
}

// ApplyStep names manifests: files (relative to the scenario file, each
// may hold several documents) and inline objects.
//
// +kubebuilder:object:generate=false
type ApplyStep struct {
	File      string   `json:"file,omitempty"`
	Files     []string `json:"files,omitempty"`
	Resource  Object   `json:"resource,omitempty"`
	Resources []Object `json:"resources,omitempty"`
}

// Object is a Kubernetes object (or part of one) as written in the file.
//
// +kubebuilder:object:generate=false
type Object map[string]any

// ScaleStep sets a workload's replicas (kind default Deployment) or the
// number of nodes in a node group.
//
// +kubebuilder:object:generate=false
type ScaleStep struct {
	Kind      string  `json:"kind,omitempty"`
	Name      string  `json:"name,omitempty"`
	Namespace string  `json:"namespace,omitempty"`
	NodeGroup *string `json:"nodeGroup,omitempty"`
	Replicas  int32   `json:"replicas"`
}

// UsageStep sets what the pods it selects use from then on, through a
// ClusterResourceUsage (kwok.x-k8s.io) the step owns, named after the
// scenario, the namespace and the selector: a later usage step for the same
// pods replaces it, and pods created later (an HPA's) are covered too.
//
// +kubebuilder:object:generate=false
type UsageStep struct {
	// Selector is a label selector (app=web); none: every pod.
	Selector string `json:"selector,omitempty"`
	// Namespace: default "default"; "*": every namespace.
	Namespace string `json:"namespace,omitempty"`
	// CPU (cores) and Memory (bytes) per container; at least one.
	CPU    *UsageAmount `json:"cpu,omitempty"`
	Memory *UsageAmount `json:"memory,omitempty"`
}

// UsageAmount is a quantity (`900m`, `200Mi`) or `{expression: CEL}`, as a
// ClusterResourceUsage takes it (KWOK's functions: Now, Rand, SinceSecond,
// UnixSecond, Quantity).
//
// +kubebuilder:object:generate=false
type UsageAmount struct {
	Value      string `json:"value,omitempty"`
	Expression string `json:"expression,omitempty"`
}

// UnmarshalJSON takes a quantity as a string or a number, or the object.
func (a *UsageAmount) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*a = UsageAmount{Value: s}
		return nil
	}
	var n json.Number
	if json.Unmarshal(data, &n) == nil {
		*a = UsageAmount{Value: n.String()}
		return nil
	}
	var p struct {
		Value      json.RawMessage `json:"value"`
		Expression string          `json:"expression"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if dec.Decode(&p) != nil {
		return fmt.Errorf("want a quantity (900m), {value: 900m} or {expression: ...}")
	}
	*a = UsageAmount{Expression: p.Expression}
	if p.Value != nil {
		var v UsageAmount
		if err := v.UnmarshalJSON(p.Value); err != nil || v.Expression != "" {
			return fmt.Errorf("value: want a quantity (900m)")
		}
		a.Value = v.Value
	}
	return nil
}

// NodeRef picks nodes: `node-000000`, `[a, b]`, or `{selector: k=v}`.
//
// +kubebuilder:object:generate=false
type NodeRef struct {
	Names    []string `json:"names,omitempty"`
	Selector string   `json:"selector,omitempty"`
}

// UnmarshalJSON takes a name, a list of names, or {names, selector}.
func (n *NodeRef) UnmarshalJSON(data []byte) error {
	var name string
	if json.Unmarshal(data, &name) == nil {
		n.Names = []string{name}
		return nil
	}
	var names []string
	if json.Unmarshal(data, &names) == nil {
		n.Names = names
		return nil
	}
	type plain NodeRef
	var p plain
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("nodes: want a node name, a list of names, or {names: [...], selector: k=v} (%v)", strings.TrimPrefix(err.Error(), "json: "))
	}
	*n = NodeRef(p)
	return nil
}

func (n NodeRef) String() string {
	if n.Selector != "" {
		return n.Selector
	}
	return strings.Join(n.Names, ",")
}

// LabelStep sets labels on nodes; a null value removes the label.
//
// +kubebuilder:object:generate=false
type LabelStep struct {
	Nodes  NodeRef            `json:"nodes"`
	Labels map[string]*string `json:"labels"`
}

// TaintStep adds taints to nodes, or removes them (by key and effect).
//
// +kubebuilder:object:generate=false
type TaintStep struct {
	Nodes  NodeRef        `json:"nodes"`
	Taints []corev1.Taint `json:"taints"`
	Remove bool           `json:"remove,omitempty"`
}

// DrainStep cordons nodes and evicts their pods through the eviction API
// with kubectl's drain helper (its choice of pods and its eviction), in waves of MaxUnavailable nodes (default: all in
// one). Each wave waits for the replacements of the pods it evicted to be
// Running elsewhere (or found unschedulable) before the next. Expect says
// what must come of it: completes (the default; refused evictions are
// retried until the timeout) or blocked (at least one eviction is refused,
// each pod tried once).
//
// +kubebuilder:object:generate=false
type DrainStep struct {
	// Node and Nodes are the same field, one or the other: the nodes to
	// drain (a name, a list, or {selector}).
	Node  NodeRef `json:"node,omitempty"`
	Nodes NodeRef `json:"nodes,omitempty"`
	// MaxUnavailable is how many nodes a wave drains at once (0: all).
	MaxUnavailable int `json:"maxUnavailable,omitempty"`
	// Surge adds nodes to a node group before the first wave.
	Surge  *DrainSurge `json:"surge,omitempty"`
	Expect string      `json:"expect,omitempty"`
	// Force, IgnoreDaemonSets and DeleteEmptyDirData are kubectl drain's
	// --force, --ignore-daemonsets and --delete-emptydir-data, each true
	// unless set false: false makes the drain refuse a node with such
	// pods, as kubectl does without the flag.
	Force              *bool `json:"force,omitempty"`
	IgnoreDaemonSets   *bool `json:"ignoreDaemonSets,omitempty"`
	DeleteEmptyDirData *bool `json:"deleteEmptyDirData,omitempty"`
}

// DrainSurge adds Count nodes to the node group NodeGroup ("" is the
// unnamed group) and waits until they are Ready.
//
// +kubebuilder:object:generate=false
type DrainSurge struct {
	NodeGroup string `json:"nodeGroup"`
	Count     int    `json:"count"`
}

// Targets are the nodes the step drains: Nodes, else Node.
func (d *DrainStep) Targets() NodeRef {
	if len(d.Nodes.Names) > 0 || d.Nodes.Selector != "" {
		return d.Nodes
	}
	return d.Node
}

// EvictStep evicts one pod, by name or the first (by name) a selector picks.
// Expect: allowed (default) or refused.
//
// +kubebuilder:object:generate=false
type EvictStep struct {
	Pod       string `json:"pod,omitempty"`
	Selector  string `json:"selector,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Expect    string `json:"expect,omitempty"`
}

// DescheduleStep runs one descheduler cycle with named profiles or a
// policy file; DryRun asks the API server and changes nothing.
//
// +kubebuilder:object:generate=false
type DescheduleStep struct {
	Profiles []string `json:"profiles,omitempty"`
	Policy   string   `json:"policy,omitempty"`
	DryRun   bool     `json:"dryRun,omitempty"`
}

// UpgradeStep names the Kubernetes minor version to upgrade to ("1.36").
//
// +kubebuilder:object:generate=false
type UpgradeStep struct {
	Kubernetes string `json:"kubernetes,omitempty"`
}

// KueueSimulateStep is a Job (from a file, or inline) to ask Kueue about,
// in Namespace unless it names its own (default "default"), and the
// verdict the step requires, if any: admitted, quotaReserved, pending or
// preempts. Why, when set, must be part of Kueue's message for a pending
// Job.
//
// +kubebuilder:object:generate=false
type KueueSimulateStep struct {
	File      string `json:"file,omitempty"`
	Resource  Object `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Expect    string `json:"expect,omitempty"`
	Why       string `json:"why,omitempty"`
}

// WaitStep waits (watching, not polling) until its assertion holds, for at
// most the step's timeout.
//
// +kubebuilder:object:generate=false
type WaitStep struct {
	Assertion `json:",inline"`
}

// ForeachStep runs its steps once per value, with ${Var} the value. Read
// from a file, Steps holds them once per value, in turn, each with its
// value in place.
//
// +kubebuilder:object:generate=false
type ForeachStep struct {
	Var    string   `json:"var,omitempty"`
	Values []string `json:"values"`
	Steps  []Step   `json:"steps"`
}

// Args are kubectl's arguments: a list, or one string split at spaces.
//
// +kubebuilder:object:generate=false
type Args []string

// UnmarshalJSON takes a string or a list of strings.
func (a *Args) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*a = strings.Fields(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("want kubectl's arguments as a string or a list of strings")
	}
	*a = list
	return nil
}

// Assertion is one thing that must hold; exactly one of its checks (the
// fields after Name) is set. Adding a check adds its field here.
//
// +kubebuilder:object:generate=false
type Assertion struct {
	// Name names the assertion in reports (default: a description of it).
	Name string `json:"name,omitempty"`

	Object    Object           `json:"object,omitempty"`
	Pods      *PodsAssertion   `json:"pods,omitempty"`
	Spread    *SpreadAssertion `json:"spread,omitempty"`
	PerNode   *PerNodeAssert   `json:"perNode,omitempty"`
	OnlyOn    *OnlyOnAssertion `json:"onlyOn,omitempty"`
	Nodes     *NodesAssertion  `json:"nodes,omitempty"`
	PDB       *PDBAssertion    `json:"pdb,omitempty"`
	DPDB      *PDBAssertion    `json:"dpdb,omitempty"`
	Evictions *EvictionsAssert `json:"evictions,omitempty"`
	Event     *EventAssertion  `json:"event,omitempty"`
	RolledOut *WorkloadRef     `json:"rolledOut,omitempty"`
	// Workloads counts Kueue's Workloads of a queue in a state (the
	// kueue add-on).
	Workloads *WorkloadsAssertion `json:"workloads,omitempty"`
	CEL       string              `json:"cel,omitempty"`
	// MaxNodes and MaxDisrupting bound the nodes over a window: never
	// more than Max at once; Cost bounds what they cost over it.
	MaxNodes      *NodeBound     `json:"maxNodes,omitempty"`
	MaxDisrupting *NodeBound     `json:"maxDisrupting,omitempty"`
	Cost          *CostAssertion `json:"cost,omitempty"`
	// ClusterQueue bounds a Kueue ClusterQueue over a window, from the
	// status Kueue kept of it: never more than these at once.
	ClusterQueue *ClusterQueueBound `json:"clusterQueue,omitempty"`
}

// ClusterQueueBound: over the window since the step Since names (default
// the first), the ClusterQueue Name never had more than MaxAdmitted
// Workloads admitted, MaxPending pending, or MaxInUse of a resource
// (summed over its flavors) in use by its admitted Workloads, at once.
// At least one bound.
//
// +kubebuilder:object:generate=false
type ClusterQueueBound struct {
	Name        string                       `json:"name"`
	MaxAdmitted *int32                       `json:"maxAdmitted,omitempty"`
	MaxPending  *int32                       `json:"maxPending,omitempty"`
	MaxInUse    map[string]resource.Quantity `json:"maxInUse,omitempty"`
	Since       string                       `json:"since,omitempty"`
}

// WorkloadsAssertion counts Kueue's Workloads in a state: of the
// ClusterQueue Queue (those pending in its LocalQueues too), or of the
// LocalQueue LocalQueue in Namespace (default "default"), or all.
//
// +kubebuilder:object:generate=false
type WorkloadsAssertion struct {
	Queue      string `json:"queue,omitempty"`
	LocalQueue string `json:"localQueue,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// State is one of WorkloadStates, as Kueue's conditions say: pending
	// (no quota reserved), quotaReserved, admitted, finished; preempted and
	// evicted (their conditions True: a Workload preempted and requeued is
	// pending and preempted).
	State string `json:"state"`
	Count `json:",inline"`
}

// WorkloadStates are the states a workloads assertion counts.
var WorkloadStates = []string{"pending", "quotaReserved", "admitted", "finished", "preempted", "evicted"}

// PodSet picks pods: by label selector (default all) in a namespace
// (default "default"; "*" for all).
//
// +kubebuilder:object:generate=false
type PodSet struct {
	Selector  string `json:"selector,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Count is an expected number: exactly Count, or between Min and Max.
//
// +kubebuilder:object:generate=false
type Count struct {
	Count *int `json:"count,omitempty"`
	Min   *int `json:"min,omitempty"`
	Max   *int `json:"max,omitempty"`
}

// PodsAssertion counts the pods of a set that are in a phase (Pending,
// Running, …), ready or not, on a node or on nodes a selector picks.
//
// +kubebuilder:object:generate=false
type PodsAssertion struct {
	PodSet       `json:",inline"`
	Count        `json:",inline"`
	Phase        string `json:"phase,omitempty"`
	Ready        *bool  `json:"ready,omitempty"`
	Node         string `json:"node,omitempty"`
	NodeSelector string `json:"nodeSelector,omitempty"`
}

// SpreadAssertion checks how the scheduled pods of a set spread over the
// domains of a topology key (every value the key has on the nodes the node
// selector picks, a domain with no pods counting 0): the difference between
// the fullest and the emptiest at most MaxSkew, and, if given, the exact
// count per domain.
//
// +kubebuilder:object:generate=false
type SpreadAssertion struct {
	PodSet       `json:",inline"`
	TopologyKey  string         `json:"topologyKey"`
	MaxSkew      *int           `json:"maxSkew,omitempty"`
	NodeSelector string         `json:"nodeSelector,omitempty"`
	Counts       map[string]int `json:"counts,omitempty"`
}

// PerNodeAssert bounds the pods of a set on any one node (max: 1 means no
// two share a node).
//
// +kubebuilder:object:generate=false
type PerNodeAssert struct {
	PodSet `json:",inline"`
	Max    int `json:"max"`
}

// OnlyOnAssertion checks that every scheduled pod of a set is on one of
// the nodes picked.
//
// +kubebuilder:object:generate=false
type OnlyOnAssertion struct {
	PodSet `json:",inline"`
	Nodes  NodeRef `json:"nodes"`
}

// NodesAssertion counts the nodes picked (by Nodes, or by Selector, a
// label selector: the same as nodes: {selector}) that are Ready (or not).
//
// +kubebuilder:object:generate=false
type NodesAssertion struct {
	Nodes    NodeRef `json:"nodes,omitempty"`
	Selector string  `json:"selector,omitempty"`
	Ready    *bool   `json:"ready,omitempty"`
	Count    `json:",inline"`
}

// NodeBound bounds, over a window, how many of the nodes a label selector
// picks (none: all) there are at once (maxNodes), or are being disrupted at
// once (maxDisrupting: tainted karpenter.sh/disrupted, or deleting). The
// window runs from the start of the step Since names (default: the first
// step) to the assertion.
//
// +kubebuilder:object:generate=false
type NodeBound struct {
	Selector string `json:"selector,omitempty"`
	Max      *int   `json:"max"`
	Since    string `json:"since,omitempty"`
}

// CostAssertion bounds what the nodes a label selector picks (default
// karpenter.sh/nodepool: every node a NodePool launched) cost over a
// window, as NodeBound's: Max in dollars at each node's price per hour,
// MaxNodeHours in node-hours; at least one.
//
// +kubebuilder:object:generate=false
type CostAssertion struct {
	Selector     string  `json:"selector,omitempty"`
	Max          Decimal `json:"max,omitempty"`
	MaxNodeHours Decimal `json:"maxNodeHours,omitempty"`
	Since        string  `json:"since,omitempty"`
}

// Decimal is a number as the file writes it: 12.5 or "12.5".
type Decimal string

// UnmarshalJSON takes a number or a string.
func (d *Decimal) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*d = Decimal(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("want a number such as 12.5")
	}
	*d = Decimal(n.String())
	return nil
}

// PDBAssertion checks the status of a PodDisruptionBudget (`pdb`) or a
// DistributedPodDisruptionBudget (`dpdb`): the one named, each of Names,
// or, with neither, every one in the namespace (at least one must exist).
//
// +kubebuilder:object:generate=false
type PDBAssertion struct {
	Name               string   `json:"name,omitempty"`
	Names              []string `json:"names,omitempty"`
	Namespace          string   `json:"namespace,omitempty"`
	DisruptionsAllowed *int32   `json:"disruptionsAllowed,omitempty"`
	CurrentHealthy     *int32   `json:"currentHealthy,omitempty"`
}

// EvictionsAssert counts the evictions the last drain, evict or deschedule
// step made (or, in a dry run, would make) and those refused.
//
// +kubebuilder:object:generate=false
type EvictionsAssert struct {
	Made    *int `json:"made,omitempty"`
	Refused *int `json:"refused,omitempty"`
}

// EventAssertion checks that an Event was recorded: its reason, the kind
// and name (a prefix with a trailing *) of its object, words of its message.
//
// +kubebuilder:object:generate=false
type EventAssertion struct {
	Reason    string `json:"reason"`
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Message   string `json:"message,omitempty"`
}

// WorkloadRef names a workload (kind default Deployment).
//
// +kubebuilder:object:generate=false
type WorkloadRef struct {
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

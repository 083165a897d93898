// Package record is the form of a pod's last scheduling attempt as the
// explain recorder (package recorder) keeps it inside kube-scheduler and
// serves it: plain data, shared by every Kubernetes version's scheduler
// and by `kubesim explain` (package explain), which adds what it reads
// elsewhere (Karpenter's view) and shows it.
package record

import "time"

// Filter verdicts of a node.
const (
	Passed = "Passed"
	// Rejected: a Filter plugin ruled the node out.
	Rejected = "Rejected"
	// RejectedAtPreFilter: a PreFilter plugin ruled out every node, or
	// every node but a set this one is not in.
	RejectedAtPreFilter = "RejectedAtPreFilter"
	// NotEvaluated: the scheduler had found enough feasible nodes
	// (percentageOfNodesToScore) or tried only a hinted node first.
	NotEvaluated = "NotEvaluated"
)

// Reasons of a Problem.
const (
	NotRecorded = "NotRecorded"
	Forbidden   = "Forbidden"
)

// Problem is the body of the endpoint's every answer but an explanation.
type Problem struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Results of an attempt.
const (
	Scheduled     = "Scheduled"
	Unschedulable = "Unschedulable"
	Error         = "Error"
	// BoundDirectly: the pod was made with spec.nodeName set, so it never
	// went through the scheduler and there is no attempt to explain.
	BoundDirectly = "BoundDirectly"
)

// Explanation is the last scheduling attempt of one pod, as kube-scheduler
// made it.
type Explanation struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       string    `json:"uid"`
	Profile   string    `json:"profile"`
	Attempted time.Time `json:"attempted"`
	// Result is Scheduled, Unschedulable, Error or BoundDirectly.
	Result string `json:"result"`
	// Node is the node chosen, when Scheduled.
	Node string `json:"node,omitempty"`
	// Message is the scheduler's own summary of a failure, preemption's
	// verdict included.
	Message string `json:"message,omitempty"`
	// NodeHint is the node tried first (a nominated node, or the one the
	// scheduler's batching of identical pods suggested); when it fits,
	// no other node is evaluated.
	NodeHint string `json:"nodeHint,omitempty"`
	// NominatedNode is where preemption made room, for a later attempt.
	NominatedNode string `json:"nominatedNode,omitempty"`
	// PreFilter is what PreFilter plugins decided before any node was
	// looked at, when they ruled nodes out.
	PreFilter *PreFilter `json:"preFilter,omitempty"`
	// ScorePlugins are the profile's score plugins and their weights.
	ScorePlugins []ScorePlugin `json:"scorePlugins,omitempty"`
	// Nodes: the chosen node, then scored nodes by total, then feasible
	// nodes not scored, then rejected ones, then those not evaluated.
	Nodes []NodeResult `json:"nodes"`
}

// PreFilter is the PreFilter plugins' verdict.
type PreFilter struct {
	// Plugins are those that ruled nodes out.
	Plugins []string `json:"plugins,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Nodes, when set, are the only nodes PreFilter left to evaluate.
	Nodes []string `json:"nodes,omitempty"`
}

// ScorePlugin is a score plugin of the profile.
type ScorePlugin struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
}

// NodeResult is what the attempt made of one node.
type NodeResult struct {
	Name string `json:"name"`
	// Filter is Passed, Rejected, RejectedAtPreFilter or NotEvaluated.
	Filter string `json:"filter"`
	// Plugin is the plugin that rejected the node, and Reasons its words.
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Scores are set for the nodes that were scored; a plugin absent
	// skipped scoring for this pod.
	Scores []PluginScore `json:"scores,omitempty"`
	Total  *int64        `json:"total,omitempty"`
}

// PluginScore is one plugin's score of one node: Normalized is the
// plugin's 0–100 score after its own normalisation, Weighted that times the
// plugin's weight, which is what the total adds up.
type PluginScore struct {
	Plugin     string `json:"plugin"`
	Normalized int64  `json:"normalized"`
	Weighted   int64  `json:"weighted"`
}

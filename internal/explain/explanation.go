// Package explain is `kubesim explain`'s side of the scheduler's records:
// the form of an explanation, the client that fetches one from the
// scheduler, and how it is shown.
//
// The records are made inside kube-scheduler by package recorder, which
// sits between the scheduler and its framework: it sees every filter
// verdict and every score the real plugins return for the cluster's
// profiles, and keeps the last attempt of each pod in the scheduler's
// memory — never in an API object. Their form is package record's,
// which every Kubernetes version's scheduler is built with.
//
// In a cluster that runs Karpenter, it also reads Karpenter's own state —
// its events, NodeClaims and NodePools — for a Pending pod and for a node
// (karpenter.go): what Karpenter wrote, never a second model of it.
package explain

import "github.com/kubesim/kubesim/upstream/record"

// Filter verdicts of a node, Problem reasons, and attempt results: the
// recorder's (package record).
const (
	Passed              = record.Passed
	Rejected            = record.Rejected
	RejectedAtPreFilter = record.RejectedAtPreFilter
	NotEvaluated        = record.NotEvaluated

	NotRecorded = record.NotRecorded
	Forbidden   = record.Forbidden

	Scheduled     = record.Scheduled
	Unschedulable = record.Unschedulable
	Error         = record.Error
	BoundDirectly = record.BoundDirectly
)

// The recorder's data, by the names explain's users know.
type (
	Problem     = record.Problem
	PreFilter   = record.PreFilter
	ScorePlugin = record.ScorePlugin
	NodeResult  = record.NodeResult
	PluginScore = record.PluginScore
)

// Explanation is the last scheduling attempt of one pod, as kube-scheduler
// made it, with Karpenter's view of it when the cluster runs Karpenter.
// `kubesim explain -o json` prints it as it is: the attempt's fields, then
// karpenter.
type Explanation struct {
	record.Explanation
	// Karpenter is the autoscaler's view of a pod still Pending, when the
	// cluster runs Karpenter: added by `kubesim explain`, never by the
	// scheduler.
	Karpenter *KarpenterPod `json:"karpenter,omitempty"`
}

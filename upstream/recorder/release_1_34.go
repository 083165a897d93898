//go:build kube_1_34

package recorder

// The framework's types the recorder names, as 1.34 has them: in the
// scheduler's own package, not kube-scheduler's module. 1.34's framework
// gives no node hint, so an attempt keeps none.

import "k8s.io/kubernetes/pkg/scheduler/framework"

type (
	nominatingInfo   = framework.NominatingInfo
	preFilterResult  = framework.PreFilterResult
	nodePluginScores = framework.NodePluginScores
)

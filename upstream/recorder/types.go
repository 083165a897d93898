//go:build !kube_1_34

package recorder

import fwk "k8s.io/kube-scheduler/framework"

// The framework's types the recorder names, in kube-scheduler's module
// since 1.35 (release_1_34.go has 1.34's).
type (
	nominatingInfo   = fwk.NominatingInfo
	preFilterResult  = fwk.PreFilterResult
	nodePluginScores = fwk.NodePluginScores
)

//go:build kube_1_35

package recorder

// GetNodeHint as 1.35 has it: it returns the pod's signature beside the
// hint.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

func (f *recordingFramework) GetNodeHint(ctx context.Context, pod *v1.Pod, state fwk.CycleState, cycle int64) (string, fwk.PodSignature) {
	hint, signature := f.Framework.GetNodeHint(ctx, pod, state, cycle)
	if hint != "" {
		f.a.hint = hint // before any filter runs: no lock needed
	}
	return hint, signature
}

//go:build kube_1_35

package recorder

// What of the scheduler's API the recorder uses, as v1.35 has it: the
// scheduler passes SchedulePod the pod, not its queue entry, and the
// framework's node hint comes with the pod's signature.

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The framework's types the recorder names (as release.go's).
type (
	nominatingInfo   = fwk.NominatingInfo
	preFilterResult  = fwk.PreFilterResult
	nodePluginScores = fwk.NodePluginScores
)

// Install puts the recorder between the scheduler and its frameworks (as
// release.go's).
func (r *Recorder) Install(s *scheduler.Scheduler) {
	schedule := s.SchedulePod
	s.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pod *v1.Pod) (scheduler.ScheduleResult, error) {
		a := r.begin(f, pod)
		result, err := schedule(ctx, &recordingFramework{Framework: f, a: a}, state, pod)
		r.passedHint.Store(int64(len(a.passed)))
		a.finish(result.SuggestedHost, err)
		r.keep(a)
		return result, err
	}
	fail := s.FailureHandler
	s.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominating *fwk.NominatingInfo, start time.Time) {
		fail(ctx, f, podInfo, status, nominating, start)
		r.failed(podInfo.Pod, status, nominating)
	}
}

func (f *recordingFramework) GetNodeHint(ctx context.Context, pod *v1.Pod, state fwk.CycleState, cycle int64) (string, fwk.PodSignature) {
	hint, signature := f.Framework.GetNodeHint(ctx, pod, state, cycle)
	if hint != "" {
		f.a.hint = hint // before any filter runs: no lock needed
	}
	return hint, signature
}

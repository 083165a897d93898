//go:build kube_1_34 || kube_1_35

package recorder

// Install as 1.34 and 1.35 have it: the scheduler passes SchedulePod the
// pod, not its queue entry.

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
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
	s.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominating *nominatingInfo, start time.Time) {
		fail(ctx, f, podInfo, status, nominating, start)
		r.failed(podInfo.Pod, status, nominating)
	}
}

//go:build !kube_1_34 && !kube_1_35

package recorder

// What of the scheduler's API the recorder uses that differs between
// Kubernetes releases, as of v1.36 (and v1.37). What differs before is in
// files built with each release's tag (versions/README.md): SchedulePod
// takes the pod before 1.36 (release_pod.go), GetNodeHint returns the
// pod's signature in 1.35 (release_1_35.go) and is not there in 1.34,
// whose framework types are in the scheduler's own package
// (release_1_34.go; types.go for the others).

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Install puts the recorder between the scheduler and its frameworks: each
// attempt's framework calls pass through a recording framework, and its
// failures through the recorder after the scheduler has handled them.
func (r *Recorder) Install(s *scheduler.Scheduler) {
	schedule := s.SchedulePod
	s.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		a := r.begin(f, podInfo.Pod)
		result, err := schedule(ctx, &recordingFramework{Framework: f, a: a}, state, podInfo)
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

func (f *recordingFramework) GetNodeHint(ctx context.Context, pod *v1.Pod, signature fwk.PodSignature, state fwk.CycleState, cycle int64) string {
	hint := f.Framework.GetNodeHint(ctx, pod, signature, state, cycle)
	if hint != "" {
		f.a.hint = hint // before any filter runs: no lock needed
	}
	return hint
}

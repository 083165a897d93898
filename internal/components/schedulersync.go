package components

import (
	"context"
	"os"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
)

// The scheduler's process starts beside the API server, so that its
// start-up is done by the time the cluster's bootstrap is; these are the
// two ends of that early start.

// grantPoll is how often the scheduler asks whether it may start: as often
// as the supervisor asks readiness.
const grantPoll = 25 * time.Millisecond

// waitForGrants returns once the scheduler may list what it watches: its
// two upstream roles (system:kube-scheduler, system:volume-scheduler) are
// bound. An informer refused before that would back off for a second or
// more, and the scheduler sync that much later.
func waitForGrants(ctx context.Context, client kubernetes.Interface) error {
	checks := []authorizationv1.ResourceAttributes{
		{Verb: "list", Resource: "pods"},
		{Verb: "list", Group: "storage.k8s.io", Resource: "storageclasses"},
	}
	// Waits for real work: as long in real time on a scaled clock.
	return wait.PollUntilContextCancel(ctx, clusterclock.Stretch(grantPoll), true, func(ctx context.Context) (bool, error) {
		for _, attrs := range checks {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
			ctx, cancel := context.WithTimeout(ctx, clusterclock.Stretch(time.Second))
			got, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			cancel()
			if err != nil || !got.Status.Allowed {
				return false, nil // not serving, or not bootstrapped yet
			}
		}
		return true, nil
	})
}

// markSynced writes file once the scheduler's informers have synced and
// its event handlers have seen their initial lists: upstream's
// sched-handler-sync readiness, which the supervisor reads from the file.
func markSynced(ctx context.Context, sched *scheduler.Scheduler, file string) {
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return // stopped first
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		klog.ErrorS(err, "Cannot mark the scheduler synced", "file", file)
	}
}

package scenario

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// drainPod is a pod on node-0, owned by a controller of kind (none if "").
func drainPod(name, kind string, mutate ...func(*corev1.Pod)) runtime.Object {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "node-0"}}
	if kind != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name + "-owner", UID: types.UID("uid-" + name), Controller: &yes}}
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// The drain chooses pods as kubectl drain does: a DaemonSet's pod stays
// while its DaemonSet exists and goes once orphaned; a finished pod, a pod
// with emptyDir data and a pod no controller recreates go (force and
// deleteEmptyDirData by default); a mirror pod stays. Without force, the
// node is refused in kubectl's words.
func TestDrainChoosesPodsAsKubectlDrain(t *testing.T) {
	objs := []runtime.Object{
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds-owner", Namespace: "default"}},
		drainPod("rs", "ReplicaSet"),
		drainPod("ds", "DaemonSet"),
		drainPod("orphan", "DaemonSet"),
		drainPod("bare", ""),
		drainPod("scratch", "ReplicaSet", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}),
		drainPod("done", "", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		drainPod("mirror", "", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
	}
	// The DaemonSet of pod "ds" is "ds-owner"; "orphan"'s is gone.
	tg := &target{client: fake.NewClientset(objs...)}
	pods, err := evictable(tg.drainer(t.Context(), &v1alpha1.DrainStep{}), "node-0")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	if want := []string{"bare", "done", "orphan", "rs", "scratch"}; !slices.Equal(names, want) {
		t.Errorf("evicts %v, want %v", names, want)
	}

	no := false
	_, err = evictable(tg.drainer(t.Context(), &v1alpha1.DrainStep{Force: &no}), "node-0")
	if err == nil || !strings.Contains(err.Error(), "default/bare") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("force: false: %v; want kubectl's refusal of default/bare", err)
	}
	_, err = evictable(tg.drainer(t.Context(), &v1alpha1.DrainStep{DeleteEmptyDirData: &no}), "node-0")
	if err == nil || !strings.Contains(err.Error(), "default/scratch") {
		t.Errorf("deleteEmptyDirData: false: %v; want kubectl's refusal of default/scratch", err)
	}
}

// A budget's refusal and a webhook's are refusals; the API server's
// throttle (Retry-After, no budget) is waited out.
func TestThrottleIsNoRefusal(t *testing.T) {
	budget := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	budget.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget web needs 2 healthy pods and has 2 currently"}}
	webhook := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests,
		Reason: metav1.StatusReasonTooManyRequests, Message: `admission webhook "dpdb.kubesim.io" denied the request: budget`}}
	apf := apierrors.NewTooManyRequests("Too many requests, please try again later.", 2)
	for name, c := range map[string]struct {
		err       error
		throttled bool
		wait      time.Duration
	}{
		"a budget's refusal": {budget, false, 0},
		"a webhook's":        {webhook, false, 0},
		"a throttle":         {apf, true, 2 * time.Second},
	} {
		wait, throttled := throttle(c.err)
		if throttled != c.throttled || wait != c.wait {
			t.Errorf("%s: throttled %v after %s, want %v after %s", name, throttled, wait, c.throttled, c.wait)
		}
	}
	if got := refusalWords(budget); !strings.Contains(got, "needs 2 healthy pods") {
		t.Errorf("a budget's refusal reads %q", got)
	}
}

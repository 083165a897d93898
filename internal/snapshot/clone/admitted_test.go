package clone

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// Pods admission would take as they are go straight into etcd; any other
// is named with what admission would do about it.
func TestAdmittedNamesWhatAdmissionWouldChange(t *testing.T) {
	never := corev1.PreemptNever
	client := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: &never},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}},
	)
	a, err := listAdmission(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(change func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
			Spec: corev1.PodSpec{ServiceAccountName: "default", Priority: ptr.To[int32](0)}}
		change(p)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // "" admitted as it is
	}{
		{"as exported", pod(func(*corev1.Pod) {}), ""},
		{"of its class", pod(func(p *corev1.Pod) {
			p.Spec.PriorityClassName, p.Spec.Priority, p.Spec.PreemptionPolicy = "high", ptr.To[int32](1000), &never
		}), ""},
		{"with its runtime's overhead", pod(func(p *corev1.Pod) {
			p.Spec.RuntimeClassName, p.Spec.Overhead = ptr.To("kata"), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
		}), ""},
		{"no namespace", pod(func(p *corev1.Pod) { p.Namespace = "gone" }), "namespace does not exist"},
		{"no service account", pod(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "robot" }), "service account robot"},
		{"no class", pod(func(p *corev1.Pod) { p.Spec.PriorityClassName = "nope" }), "PriorityClass nope does not exist"},
		{"another priority", pod(func(p *corev1.Pod) {
			p.Spec.PriorityClassName, p.Spec.Priority, p.Spec.PreemptionPolicy = "high", ptr.To[int32](5), &never
		}), "priority is not its PriorityClass high's"},
		{"no priority", pod(func(p *corev1.Pod) { p.Spec.Priority = nil }), "priority other than 0"},
		{"another preemption policy", pod(func(p *corev1.Pod) {
			p.Spec.PriorityClassName, p.Spec.Priority = "high", ptr.To[int32](1000)
		}), "preemption policy"},
		{"no runtime class", pod(func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("gvisor") }), "RuntimeClass gvisor does not exist"},
		{"another overhead", pod(func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("kata") }), "overhead"},
	} {
		got := a.why(tc.pod)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

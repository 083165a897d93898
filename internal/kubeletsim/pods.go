package kubeletsim

import (
	"context"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/internal/stage"
)

// podKind is how the stage runner reads and changes Pods.
type podKind struct{ s *Simulator }

func (k *podKind) name() string { return "Pod" }

func (k *podKind) get(key string) (runtime.Object, bool) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false
	}
	pod, err := k.s.podLister.Pods(ns).Get(name)
	return pod, err == nil
}

// managed: pods bound to a node this simulator manages; others, and pods
// on nodes that do not exist, are left alone.
func (k *podKind) managed(obj runtime.Object) bool {
	pod := obj.(*corev1.Pod)
	return pod.Spec.NodeName != "" && k.s.manages(pod.Spec.NodeName)
}

func (k *podKind) keys() []string { return k.s.podsByNode.ListKeys() }

func (k *podKind) funcs(obj runtime.Object) template.FuncMap {
	return podFuncs(obj.(*corev1.Pod), k.s.nodeIPByName, k.s.podIP, k.s.kubeletVersion)
}

// podFuncs are a pod's template helpers, given where node and pod
// addresses and the kubelet's version come from.
func podFuncs(pod *corev1.Pod, nodeIP func(node string) (string, error),
	podIP func(node string, hostNetwork bool, uid string) (string, error), version func() string) template.FuncMap {
	return template.FuncMap{
		"NodeName":    func() string { return pod.Spec.NodeName },
		"NodeIP":      func() (string, error) { return nodeIP(pod.Spec.NodeName) },
		"NodeIPWith":  nodeIP,
		"NodeIPsWith": func(node string) ([]string, error) { return one(nodeIP(node)) },
		"PodIP": func() (string, error) {
			return podIP(pod.Spec.NodeName, pod.Spec.HostNetwork, string(pod.UID))
		},
		"PodIPWith": func(node string, hostNetwork bool, uid, _, _ string) (string, error) {
			return podIP(node, hostNetwork, uid)
		},
		"PodIPsWith": func(node string, hostNetwork bool, uid, _, _ string) ([]string, error) {
			return one(podIP(node, hostNetwork, uid))
		},
		"StartTime": func() string {
			if t := pod.Status.StartTime; t != nil {
				return t.UTC().Format("2006-01-02T15:04:05Z")
			}
			return ""
		},
		"Version": version,
	}
}

func (k *podKind) traits() stage.Traits { return stage.Traits{} }

func (k *podKind) patch(ctx context.Context, obj runtime.Object, p stage.Patch) (runtime.Object, error) {
	pod := obj.(*corev1.Pod)
	if p.As != "" {
		return nil, errNoImpersonation
	}
	return k.s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, p.Type, p.Data, metav1.PatchOptions{}, p.Subresources()...)
}

// remove deletes the pod at once, as a kubelet does once its containers
// have stopped; the UID guards against deleting a namesake.
func (k *podKind) remove(ctx context.Context, obj runtime.Object) error {
	pod := obj.(*corev1.Pod)
	return k.s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
}

// held: a pod whose ResourceClaims are not reserved for it does not start,
// as the kubelet will not prepare them; it is told once why.
func (k *podKind) held(obj runtime.Object) bool {
	pod := obj.(*corev1.Pod)
	why := k.s.claims.held(pod)
	if why != "" && k.s.claims.warn(pod, why) {
		k.s.recorder.Event(pod, corev1.EventTypeWarning, "FailedPrepareDynamicResources", why)
	}
	return why != ""
}

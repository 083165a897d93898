package etcdpods

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/utils/ptr"
)

func boundPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		// What a source's pod carries, which a create drops.
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.9.9.9"},
	}
}

// Prepare does what a create through the API server does: system
// metadata, defaults, the status reset to Pending with its QoS class.
func TestPrepareIsACreate(t *testing.T) {
	pod, err := Prepare(boundPod())
	if err != nil {
		t.Fatal(err)
	}
	if pod.UID == "" || pod.CreationTimestamp.IsZero() || pod.Generation != 1 {
		t.Errorf("uid %q, created %v, generation %d: want them set as on a create", pod.UID, pod.CreationTimestamp, pod.Generation)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Status.PodIP != "" || pod.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("status %+v, want Pending, no address, BestEffort", pod.Status)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || pod.Spec.Containers[0].TerminationMessagePath == "" {
		t.Errorf("spec not defaulted: %+v", pod.Spec)
	}
}

// An invalid pod gets the API server's error, naming the field.
func TestPrepareRefusesAnInvalidPod(t *testing.T) {
	pod := boundPod()
	pod.Spec.Containers = nil
	_, err := Prepare(pod)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.containers") {
		t.Errorf("got %v, want Invalid naming spec.containers", err)
	}
}

// A privileged pod on the host's namespaces (a node agent's) is valid,
// as kubesim's API server, run with --allow-privileged=true, finds it:
// upstream's validation would otherwise read its process-wide default,
// which refuses it.
func TestPrepareTakesAPrivilegedPod(t *testing.T) {
	pod := boundPod()
	pod.Spec.HostNetwork, pod.Spec.HostPID = true, true
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	if _, err := Prepare(pod); err != nil {
		t.Errorf("a privileged pod: %v, want it taken as kubesim's API server takes it", err)
	}
}

// A status write changes only the status, and is validated as one.
func TestUpdateStatusChangesOnlyTheStatus(t *testing.T) {
	made, err := Prepare(boundPod())
	if err != nil {
		t.Fatal(err)
	}
	running := made.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	running.Status.PodIP, running.Status.PodIPs = "10.0.0.5", []corev1.PodIP{{IP: "10.0.0.5"}}
	running.Spec.Containers[0].Image = "changed:2"
	got, err := UpdateStatus(made, running)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.PodRunning || got.Status.PodIP != "10.0.0.5" || got.Spec.Containers[0].Image != "app:1" || got.UID != made.UID {
		t.Errorf("got phase %s, podIP %s, image %s, uid %s", got.Status.Phase, got.Status.PodIP, got.Spec.Containers[0].Image, got.UID)
	}
	bad := made.DeepCopy()
	bad.Status.PodIPs = []corev1.PodIP{{IP: "not-an-address"}}
	if _, err := UpdateStatus(made, bad); !apierrors.IsInvalid(err) {
		t.Errorf("a status with a bad address: %v, want Invalid", err)
	}
}

// Encode writes what the API server reads back: protobuf, the same pod.
func TestEncodeIsTheAPIServersStorageForm(t *testing.T) {
	info, _ := runtime.SerializerInfoForMediaType(legacyscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	s := &Store{encoder: legacyscheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)}
	pod, err := Prepare(boundPod())
	if err != nil {
		t.Fatal(err)
	}
	pod.ResourceVersion = "7"
	data, err := s.Encode(pod)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "k8s\x00") {
		t.Errorf("not the API server's protobuf envelope: %q", data[:8])
	}
	back := &corev1.Pod{}
	if err := runtime.DecodeInto(legacyscheme.Codecs.UniversalDeserializer(), data, back); err != nil {
		t.Fatal(err)
	}
	if back.UID != pod.UID || back.ResourceVersion != "" || back.Spec.NodeName != "node-1" {
		t.Errorf("read back uid %s, resourceVersion %q, node %q", back.UID, back.ResourceVersion, back.Spec.NodeName)
	}
	if Key(pod) != "/registry/pods/default/web-1" {
		t.Errorf("key %s", Key(pod))
	}
}

package kubeletsim

import (
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/internal/stage"
)

func starterNode(name, ip, cidr string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{PodCIDR: cidr},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "kubesim-test"},
		},
	}
}

func boundPending(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{
			{Name: "app", Image: "app:1"}, {Name: "proxy", Image: "proxy:1"},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort},
	}
}

func builtinStages(t *testing.T, set string) []*stage.Stage {
	t.Helper()
	stages, err := stage.Builtin(set)
	if err != nil {
		t.Fatal(err)
	}
	return stages
}

// A pod gets what the fast stages give a pod at once: Running, Ready,
// its containers running, its node's address, one of its node's pod
// addresses no other pod has.
func TestStarterGivesThePodReadyStagesStatus(t *testing.T) {
	nodes := []*corev1.Node{starterNode("a", "192.168.0.1", "10.0.0.0/24"), starterNode("b", "192.168.0.2", "10.0.1.0/24")}
	s := NewStarter(builtinStages(t, "fast"), nodes)
	now := time.Now()
	seen := map[string]string{}
	for _, name := range []string{"p1", "p2", "p3"} {
		pod := boundPending(name, "a")
		if err := s.Start(pod, now); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		st := pod.Status
		if st.Phase != corev1.PodRunning || st.HostIP != "192.168.0.1" || st.QOSClass != corev1.PodQOSBestEffort {
			t.Errorf("%s: phase %s, hostIP %s, qos %s", name, st.Phase, st.HostIP, st.QOSClass)
		}
		if _, cidr, _ := net.ParseCIDR("10.0.0.0/24"); !cidr.Contains(net.ParseIP(st.PodIP)) {
			t.Errorf("%s: podIP %q not in node a's podCIDR", name, st.PodIP)
		}
		if other, dup := seen[st.PodIP]; dup {
			t.Errorf("%s and %s both have %s", name, other, st.PodIP)
		}
		seen[st.PodIP] = name
		ready := false
		for _, c := range st.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		if !ready || len(st.ContainerStatuses) != 2 || st.ContainerStatuses[1].State.Running == nil {
			t.Errorf("%s: ready %v, container statuses %+v", name, ready, st.ContainerStatuses)
		}
	}
	host := boundPending("host", "b")
	host.Spec.HostNetwork = true
	if err := s.Start(host, now); err != nil || host.Status.PodIP != "192.168.0.2" {
		t.Errorf("a host-network pod: %v, podIP %q, want its node's", err, host.Status.PodIP)
	}
}

// What the simulator must do itself is refused, saying why: a stage
// that waits, no stage at all, a node without its address yet.
func TestStarterRefusesWhatTheSimulatorMustDo(t *testing.T) {
	for _, tc := range []struct {
		name, set string
		node      *corev1.Node
		pod       func() *corev1.Pod
		want      string
	}{
		{"a stage with a delay", "realistic", starterNode("a", "192.168.0.1", "10.0.0.0/24"),
			func() *corev1.Pod { return boundPending("p", "a") }, "waits"},
		{"no stage matches", "fast", starterNode("a", "192.168.0.1", "10.0.0.0/24"),
			func() *corev1.Pod {
				p := boundPending("p", "a")
				p.Status.Phase = corev1.PodSucceeded
				return p
			}, "no Pod stage"},
		{"a node without an address", "fast", starterNode("a", "", "10.0.0.0/24"),
			func() *corev1.Pod { return boundPending("p", "a") }, "no InternalIP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStarter(builtinStages(t, tc.set), []*corev1.Node{tc.node})
			pod := tc.pod()
			err := s.Start(pod, time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

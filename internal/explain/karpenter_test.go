package explain

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func karpenterEvent(uid types.UID, kind, name, reason, message string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name + "." + reason + at.Format("150405"), Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name, UID: uid},
		Reason:         reason, Message: message, Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "karpenter"}, LastTimestamp: metav1.NewTime(at), Count: 1,
	}
}

func unstructuredOf(t *testing.T, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: obj}
}

func condition(typ, status, reason string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": "", "lastTransitionTime": at.Format(time.RFC3339)}
}

func claim(name, providerID string, conditions ...any) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
		"metadata": map[string]any{"name": name, "uid": "claim-uid", "labels": map[string]any{
			"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c-4x-amd64-linux"}},
		"spec": map[string]any{},
		"status": map[string]any{"providerID": providerID, "nodeName": "kwok-default-abc",
			"conditions": conditions, "lastPodEventTime": t0.Add(time.Minute).Format(time.RFC3339)},
	}
}

func pool(consolidateAfter string) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "default", "uid": "pool-uid"},
		"spec": map[string]any{
			"template":   map[string]any{"spec": map[string]any{}},
			"limits":     map[string]any{"cpu": "8"},
			"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": consolidateAfter, "budgets": []any{map[string]any{"nodes": "10%"}}},
		},
	}
}

func fakeKarpenter(t *testing.T, kube []runtime.Object, objs ...map[string]any) *Karpenter {
	t.Helper()
	scheme := runtime.NewScheme()
	var dynObjs []runtime.Object
	for _, o := range objs {
		dynObjs = append(dynObjs, unstructuredOf(t, o))
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		nodeClaims: "NodeClaimList", nodePools: "NodePoolList",
	}, dynObjs...)
	return NewKarpenter(fake.NewClientset(kube...), dyn)
}

// Karpenter's newest event on a Pending pod is shown as it wrote it; the
// scheduler's event of the same reason is not Karpenter's.
func TestKarpenterPodFailed(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default", UID: "pod-uid"}}
	scheduler := karpenterEvent("pod-uid", "Pod", "big", "FailedScheduling", "0/3 nodes are available", t0.Add(time.Hour))
	scheduler.Source.Component = "default-scheduler"
	k := fakeKarpenter(t, []runtime.Object{pod, scheduler,
		karpenterEvent("pod-uid", "Pod", "big", "FailedScheduling", "Failed to schedule pod, incompatible with nodepool \"default\"", t0)}, pool("0s"))
	view, err := k.Pod(context.Background(), "default", "big")
	if err != nil {
		t.Fatal(err)
	}
	if view == nil || view.Event == nil || !strings.HasPrefix(view.Event.Message, "Failed to schedule pod, incompatible") {
		t.Fatalf("view %+v: want Karpenter's FailedScheduling", view)
	}
	var out bytes.Buffer
	if err := printKarpenterPod(&out, view); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "FailedScheduling  Failed to schedule pod, incompatible") {
		t.Errorf("output:\n%s", out.String())
	}
}

// A Nominated pod shows the NodeClaim named and its launch conditions;
// one not reached yet reads so.
func TestKarpenterPodNominated(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "pod-uid"}}
	k := fakeKarpenter(t, []runtime.Object{pod,
		karpenterEvent("pod-uid", "Pod", "web", "FailedScheduling", "Failed to schedule pod, all available instance types exceed limits for nodepool", t0),
		karpenterEvent("pod-uid", "Pod", "web", "Nominated", "Pod should schedule on: nodeclaim/default-abc", t0.Add(time.Second))},
		pool("0s"), claim("default-abc", "kwok://kwok-default-abc",
			condition("Registered", "Unknown", "AwaitingReconciliation", t0), condition("Launched", "True", "Launched", t0)))
	view, err := k.Pod(context.Background(), "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if view.Event.Reason != "Nominated" || view.NodeClaim == nil || view.NodeClaim.Name != "default-abc" {
		t.Fatalf("view %+v", view)
	}
	var out bytes.Buffer
	if err := printKarpenterPod(&out, view); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	launched, registered := strings.Index(text, "Launched"), strings.Index(text, "Registered")
	if launched < 0 || registered < launched || !strings.Contains(text, "Initialized  -") || !strings.Contains(text, "not set yet") {
		t.Errorf("conditions in launch order, Initialized not set yet:\n%s", text)
	}
}

func TestNominated(t *testing.T) {
	for msg, want := range map[string]string{
		"Pod should schedule on: nodeclaim/default-abc":                   "default-abc",
		"Pod should schedule on: nodeclaim/default-abc, node/kwok-abc-42": "default-abc",
		"Pod should schedule on: node/kwok-abc-42":                        "",
	} {
		if got := nominated(msg, "nodeclaim/"); got != want {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
	}
}

// A node of a NodeClaim: its pool, its consolidateAfter still running,
// Karpenter's newest event of each reason (the node's, of the same
// message on node and NodeClaim), the NodePool's budget event.
func TestKarpenterNode(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "kwok-default-abc", UID: "node-uid", CreationTimestamp: metav1.NewTime(t0),
			Labels: map[string]string{"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "c-4x-amd64-linux",
				"karpenter.sh/capacity-type": "on-demand", "eks-node-viewer/instance-price": "0.17"}},
		Spec:   corev1.NodeSpec{ProviderID: "kwok://kwok-default-abc"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	held := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default", Annotations: map[string]string{"karpenter.sh/do-not-disrupt": "true"}},
		Spec: corev1.PodSpec{NodeName: node.Name}}
	pdb := `Pdb "default/hold" prevents pod evictions`
	k := fakeKarpenter(t, []runtime.Object{node, held,
		karpenterEvent("node-uid", "Node", node.Name, "DisruptionBlocked", "Node is nominated for a pending pod", t0),
		karpenterEvent("node-uid", "Node", node.Name, "DisruptionBlocked", pdb, t0.Add(2*time.Minute)),
		karpenterEvent("claim-uid", "NodeClaim", "default-abc", "DisruptionBlocked", pdb, t0.Add(2*time.Minute)),
		karpenterEvent("pool-uid", "NodePool", "default", "DisruptionBlocked", "No allowed disruptions due to blocking budget", t0.Add(3*time.Minute)),
		karpenterEvent("claim-uid", "NodeClaim", "default-abc", "Initialized", "Status condition transitioned, Type: Initialized, Status: Unknown -> True, Reason: Initialized", t0),
	}, pool("5m"), claim("default-abc", "kwok://kwok-default-abc",
		condition("Launched", "True", "Launched", t0), condition("Initialized", "True", "Initialized", t0)))
	x, err := k.Node(context.Background(), node.Name, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if x.ManagedBy != "karpenter" || x.NodeClaim.Name != "default-abc" || x.NodePool.ConsolidateAfter != "5m0s" {
		t.Fatalf("%+v", x)
	}
	// From the last pod event (t0+1m), not initialization (t0).
	if x.Consolidation.After == nil || !x.Consolidation.After.Equal(t0.Add(6*time.Minute)) || !strings.Contains(x.Consolidation.Note, "in 4m0s") {
		t.Errorf("consolidation %+v, want consolidateAfter to elapse at t0+6m, in 4m", x.Consolidation)
	}
	if len(x.Events) != 2 || x.Events[0].On != "node/kwok-default-abc" || x.Events[0].Message != pdb || x.Events[1].On != "nodepool/default" {
		t.Errorf("events %+v: want the node's newest DisruptionBlocked, then the NodePool's", x.Events)
	}
	if len(x.DoNotDisrupt) != 1 || x.DoNotDisrupt[0] != "default/held" {
		t.Errorf("do-not-disrupt pods %v", x.DoNotDisrupt)
	}
	var out bytes.Buffer
	if err := PrintNodeExplanation(&out, x); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"managed by Karpenter, NodeClaim default-abc of NodePool default", "$0.17/hour",
		"consolidateAfter 5m0s, budgets: nodes 10%, limits: cpu 8", "Being disrupted: no", pdb, "blocking budget",
		"at most once in 2 minutes per object"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A node no NodeClaim has, and a cluster without Karpenter: one line
// saying no autoscaler manages it, and its state; a node that is not
// there: one line naming it.
func TestUnmanagedNode(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-000000", CreationTimestamp: metav1.NewTime(t0)}}
	k := fakeKarpenter(t, []runtime.Object{node}, pool("0s"))
	x, err := k.Node(context.Background(), "node-000000", t0)
	if err != nil || x.ManagedBy != "" || !strings.Contains(x.Note, "no NodeClaim") {
		t.Fatalf("%+v, %v", x, err)
	}

	k = fakeKarpenter(t, []runtime.Object{node})
	k.dyn.(*dynamicfake.FakeDynamicClient).PrependReactor("list", "nodepools", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "karpenter.sh", Resource: "nodepools"}, "")
	})
	x, err = k.Node(context.Background(), "node-000000", t0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := PrintNodeExplanation(&out, x); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || lines[0] != "Node node-000000: no autoscaler manages this node: the cluster runs none." ||
		!strings.HasPrefix(lines[1], "Ready Unknown, 0 pods") {
		t.Errorf("output:\n%s", out.String())
	}
	if view, err := k.Pod(context.Background(), "default", "p"); view != nil || err != nil {
		t.Errorf("a pod's Karpenter view in a cluster without it: %+v, %v", view, err)
	}

	if _, err := k.Node(context.Background(), "nosuch", t0); err == nil || !strings.Contains(err.Error(), `node "nosuch" not found`) {
		t.Errorf("a node that is not there: %v", err)
	}
}

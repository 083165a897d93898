package kubeletsim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// A pod starts only once each of its claims is reserved for it.
func TestClaimGateHoldsPodsUntilTheirClaimsAreReserved(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	g := &claimGate{lister: resourcelisters.NewResourceClaimLister(indexer), warned: map[types.UID]string{}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"},
		Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{
			{Name: "gpus", ResourceClaimTemplateName: ptr.To("t")},
			{Name: "shared", ResourceClaimName: ptr.To("shared")},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	expect := func(want string) {
		t.Helper()
		got := g.held(pod)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("held: %q, want %q", got, want)
		}
	}
	expect("has not been made from its template yet")
	pod.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpus", ResourceClaimName: ptr.To("p-gpus")}}
	expect(`"p-gpus" not found`)
	gpus := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-gpus"}}
	shared := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shared"}}
	_ = indexer.Add(gpus)
	_ = indexer.Add(shared)
	expect("ResourceClaim p-gpus (pod claim gpus) is not reserved for the pod")
	gpus.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "pod-uid"}}
	shared.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "other", UID: "other-uid"}}
	expect("ResourceClaim shared (pod claim shared) is not reserved for the pod")
	shared.Status.ReservedFor = append(shared.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "p", UID: "pod-uid"})
	expect("")
	// Started or going, a pod is no longer the gate's.
	gpus.Status.ReservedFor = nil
	pod.Status.Phase = corev1.PodRunning
	expect("")
	pod.Status.Phase = corev1.PodPending
	pod.DeletionTimestamp = &metav1.Time{}
	expect("")
	var none *claimGate
	if none.held(pod) != "" {
		t.Error("without claims to read, a pod is held")
	}
	if !g.warn(pod, "x") || g.warn(pod, "x") || !g.warn(pod, "y") {
		t.Error("a reason is to be told once, and a new one again")
	}
}

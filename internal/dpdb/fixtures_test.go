package dpdb

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// The objects of the sync and admission tests, in the namespace shop.

// webDPDB is the DPDB "web" of app=web pods with minAvailable, federating
// the entries given.
func webDPDB(minAvailable int32, federation ...policyv1alpha1.FederatedPDB) *policyv1alpha1.DistributedPodDisruptionBudget {
	v := intstr.FromInt32(minAvailable)
	return &policyv1alpha1.DistributedPodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop, Name: "web", UID: "web-dpdb-uid", Generation: 1},
		Spec: policyv1alpha1.DistributedPodDisruptionBudgetSpec{
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			MinAvailable: &v,
			Federation:   federation,
		},
	}
}

// countedPDB is a PDB the disruption controller has counted.
func countedPDB(name string, healthy, expected int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop, Name: name, Generation: 1},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: healthy, ExpectedPods: expected,
			DesiredHealthy: 1, DisruptionsAllowed: max(0, healthy-1)},
	}
}

// redCounted is a member cluster whose PDB shop/web counts 3 of 3 pods.
func redCounted() *fake.Clientset { return fake.NewClientset(countedPDB("web", 3, 3)) }

// pod is a running pod of app, ready or not.
func pod(name, app string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: shop, Name: name, Labels: map[string]string{"app": app}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

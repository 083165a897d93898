package nodecost

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOfReadsKarpentersLabels(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-a", Labels: map[string]string{
		"karpenter.sh/nodepool":            "default",
		"node.kubernetes.io/instance-type": "c-4x-amd64-linux",
		"karpenter.sh/capacity-type":       "spot",
		"eks-node-viewer/instance-price":   "0.170000",
	}}}
	got := Of(n)
	want := Node{Name: "kwok-a", NodePool: "default", InstanceType: "c-4x-amd64-linux", CapacityType: "spot", PricePerHour: 0.17, Priced: true}
	if got != want {
		t.Fatalf("Of = %+v, want %+v", got, want)
	}
	if got := Of(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "static", Labels: map[string]string{"eks-node-viewer/instance-price": "n/a"}}}); got.Priced || got.NodePool != "" {
		t.Fatalf("a node without a NodePool or price = %+v, want neither", got)
	}
}

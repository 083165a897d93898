// Package nodecost says what a node autoscaler's nodes cost: each node's
// price per hour as its cloud provider labelled it, and node-hours and
// cost per NodePool over a cluster's life. The prices are the instance
// type catalog's (Karpenter's KWOK provider's, or the user's own file),
// not a bill.
package nodecost

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	kwokv1alpha1 "sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Node is what the cost of one node is made of, read from its labels.
type Node struct {
	Name         string
	NodePool     string // karpenter.sh/nodepool; "" for a node no NodePool made
	InstanceType string
	CapacityType string  // on-demand, spot, reserved
	PricePerHour float64 // the offering's price; 0 when the node carries none
	Priced       bool    // whether the node carries a price at all
}

// Of reads a node's cost labels: the NodePool that launched it and the
// price Karpenter's KWOK provider wrote (eks-node-viewer/instance-price,
// the chosen offering's price per hour).
func Of(n *corev1.Node) Node {
	l := n.Labels
	out := Node{
		Name:         n.Name,
		NodePool:     l[karpenterv1.NodePoolLabelKey],
		InstanceType: l[corev1.LabelInstanceTypeStable],
		CapacityType: l[karpenterv1.CapacityTypeLabelKey],
	}
	if p, err := strconv.ParseFloat(l[kwokv1alpha1.NodeViewerLabelKey], 64); err == nil && p >= 0 {
		out.PricePerHour, out.Priced = p, true
	}
	return out
}

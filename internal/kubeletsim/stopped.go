package kubeletsim

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// StoppedLabel, set to "true" on a node, stops its simulated kubelet: no
// Lease renewals, no status, no pod changes, until it is removed. The
// node-lifecycle controller then does what it does with a dead kubelet.
const StoppedLabel = "kubesim.io/node-stopped"

// Stopped reports whether node is labelled stopped (kubesim node stop).
func Stopped(node *corev1.Node) bool {
	return node.Labels[StoppedLabel] == "true"
}

// SetStopped stops (or starts again) the simulated kubelet of a node by
// its StoppedLabel; the simulator managing the node does the rest.
func SetStopped(ctx context.Context, client kubernetes.Interface, node string, stopped bool) error {
	var value any // null removes the label
	if stopped {
		value = "true"
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{StoppedLabel: value}}})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("node %q not found", node)
	}
	return err
}

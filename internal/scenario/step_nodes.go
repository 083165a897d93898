package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

// The steps that change nodes.
func init() {
	stepKinds.register(&stepKind{
		name:     "label",
		validate: func(s *v1alpha1.Step, _ clusterNames) error { return validateNodes(s.Label.Nodes) },
		do: func(x *stepRun) (string, error) {
			return x.t.patchNodes(x.ctx, x.step.Label.Nodes, map[string]any{"metadata": map[string]any{"labels": x.step.Label.Labels}})
		},
	})
	stepKinds.register(&stepKind{
		name:     "taint",
		validate: func(s *v1alpha1.Step, _ clusterNames) error { return validateNodes(s.Taint.Nodes) },
		do:       func(x *stepRun) (string, error) { return x.t.taint(x.ctx, x.step.Taint) },
	})
	stepKinds.register(onNodes("cordon", func(s *v1alpha1.Step) *v1alpha1.NodeRef { return s.Cordon },
		func(x *stepRun, nodes v1alpha1.NodeRef) (string, error) {
			return x.t.setUnschedulable(x.ctx, nodes, true)
		}))
	stepKinds.register(onNodes("uncordon", func(s *v1alpha1.Step) *v1alpha1.NodeRef { return s.Uncordon },
		func(x *stepRun, nodes v1alpha1.NodeRef) (string, error) {
			return x.t.setUnschedulable(x.ctx, nodes, false)
		}))
	stepKinds.register(onNodes("nodeStop", func(s *v1alpha1.Step) *v1alpha1.NodeRef { return s.NodeStop },
		func(x *stepRun, nodes v1alpha1.NodeRef) (string, error) { return x.t.setStopped(x.ctx, nodes, true) }))
	stepKinds.register(onNodes("nodeStart", func(s *v1alpha1.Step) *v1alpha1.NodeRef { return s.NodeStart },
		func(x *stepRun, nodes v1alpha1.NodeRef) (string, error) { return x.t.setStopped(x.ctx, nodes, false) }))
}

// onNodes is a step kind whose field is just the nodes it acts on.
func onNodes(name string, field func(*v1alpha1.Step) *v1alpha1.NodeRef, do func(x *stepRun, nodes v1alpha1.NodeRef) (string, error)) *stepKind {
	return &stepKind{
		name:     name,
		validate: func(s *v1alpha1.Step, _ clusterNames) error { return validateNodes(*field(s)) },
		do:       func(x *stepRun) (string, error) { return do(x, *field(x.step)) },
	}
}

// setUnschedulable cordons nodes, or uncordons them.
func (t *target) setUnschedulable(ctx context.Context, ref v1alpha1.NodeRef, cordoned bool) (string, error) {
	value := any(nil) // uncordoned: the field goes
	if cordoned {
		value = true
	}
	return t.patchNodes(ctx, ref, map[string]any{"spec": map[string]any{"unschedulable": value}})
}

func validateNodes(n v1alpha1.NodeRef) error {
	if len(n.Names) == 0 && n.Selector == "" {
		return fmt.Errorf("name the nodes: a name, a list of names, or {selector: k=v}")
	}
	return parseSelector(n.Selector)
}

// patchNodes merge-patches each node.
func (t *target) patchNodes(ctx context.Context, ref v1alpha1.NodeRef, patch any) (string, error) {
	names, err := t.nodes(ctx, ref)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if _, err := t.client.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			return "", fmt.Errorf("node %s: %w", n, err)
		}
	}
	return strings.Join(names, " "), nil
}

func (t *target) taint(ctx context.Context, s *v1alpha1.TaintStep) (string, error) {
	names, err := t.nodes(ctx, s.Nodes)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := t.client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var taints []corev1.Taint
			for _, old := range node.Spec.Taints {
				drop := false
				for _, x := range s.Taints {
					drop = drop || (old.Key == x.Key && old.Effect == x.Effect)
				}
				if !drop {
					taints = append(taints, old)
				}
			}
			if !s.Remove {
				taints = append(taints, s.Taints...)
			}
			node.Spec.Taints = taints
			_, err = t.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		})
		if err != nil {
			return "", fmt.Errorf("node %s: %w", n, err)
		}
	}
	return strings.Join(names, " "), nil
}

func (t *target) setStopped(ctx context.Context, ref v1alpha1.NodeRef, stopped bool) (string, error) {
	names, err := t.nodes(ctx, ref)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if err := kubeletsim.SetStopped(ctx, t.client, n, stopped); err != nil {
			return "", err
		}
	}
	return strings.Join(names, " "), nil
}

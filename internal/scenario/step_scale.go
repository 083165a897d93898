package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name: "scale",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if (s.Scale.NodeGroup == nil) == (s.Scale.Name == "") {
				return fmt.Errorf("give name (a workload) or nodeGroup, one of them")
			}
			if s.Scale.Replicas < 0 {
				return fmt.Errorf("replicas: must be 0 or more")
			}
			return nil
		},
		timeout: func(s *v1alpha1.Step) time.Duration {
			if s.Scale.NodeGroup != nil {
				return nodesTimeout // making nodes, as setting up a cluster does
			}
			return defaultStepTimeout
		},
		do: func(x *stepRun) (string, error) { return x.t.scale(x.ctx, x.step.Scale, x.timeout) },
	})
}

var workloads = map[string]schema.GroupVersionResource{
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
}

func (t *target) scale(ctx context.Context, s *v1alpha1.ScaleStep, timeout time.Duration) (string, error) {
	if s.NodeGroup != nil {
		for i := range t.spec.NodeGroups {
			g := &t.spec.NodeGroups[i]
			if g.Name == *s.NodeGroup {
				names, err := t.scaleGroup(ctx, g, int(s.Replicas))
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("%d nodes", len(names)), t.waitNodesReady(ctx, names, timeout)
			}
		}
		return "", fmt.Errorf("nodeGroup: no node group %q in the cluster", *s.NodeGroup)
	}
	kind := s.Kind
	if kind == "" {
		kind = "Deployment"
	}
	gvr, ok := workloads[kind]
	if !ok {
		return "", fmt.Errorf("kind: %s cannot be scaled here; use Deployment, ReplicaSet or StatefulSet", kind)
	}
	ns := namespaceOrDefault(s.Namespace)
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, s.Replicas)
	_, err := t.dynamic.Resource(gvr).Namespace(ns).Patch(ctx, s.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager})
	return fmt.Sprintf("%s/%s to %d", strings.ToLower(kind), s.Name, s.Replicas), err
}

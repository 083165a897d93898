package controlplane

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// createClusterStages creates the Stages the cluster was made with
// (Cluster.stageFiles) that do not exist: before the simulator starts, so
// they rule from its first node and pod on. One that exists is left as it
// is, edits included.
func createClusterStages(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if c.Status == nil || len(c.Status.Stages) == 0 {
		return nil
	}
	cfg, err := credentials.SetupConfig(d, 10*time.Second)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	stages := client.Resource(kwokv1alpha1.StagesResource)
	for _, manifest := range c.Status.Stages {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
			return fmt.Errorf("stageFiles: %w", err)
		}
		if _, err := stages.Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("stageFiles: Stage %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

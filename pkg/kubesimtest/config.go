package kubesimtest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// writeConfig writes kubesim's Cluster file (and the node templates it
// names) into dir and returns its path.
func writeConfig(dir, name string, s *settings) (string, error) {
	c := v1alpha1.Cluster{
		TypeMeta:    metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion, Kind: v1alpha1.ClusterKind},
		Name:        name,
		ClusterSpec: *s.spec.DeepCopy(),
	}
	for _, g := range s.groups {
		group := g.NodeGroup
		if g.template != nil {
			node := g.template.DeepCopy()
			node.APIVersion, node.Kind = "v1", "Node"
			node.Name = "" // kubesim names each node
			group.Template = filepath.Join(dir, "node-template-"+group.LabelValue()+".yaml")
			if err := writeYAML(group.Template, node); err != nil {
				return "", err
			}
		}
		c.NodeGroups = append(c.NodeGroups, group)
	}
	// Stages are made with the cluster, before the simulator starts: the
	// first nodes and pods already go through them.
	for i, manifest := range s.stages {
		path := filepath.Join(dir, fmt.Sprintf("stages-%d.yaml", i))
		if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
			return "", err
		}
		c.StageFiles = append(c.StageFiles, path)
	}
	path := filepath.Join(dir, "cluster.yaml")
	return path, writeYAML(path, c)
}

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func writeYAML(path string, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o600)
}

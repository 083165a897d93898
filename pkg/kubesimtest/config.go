package kubesimtest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// writeConfig writes kubesim's Cluster file (and the node template it
// names) into dir and returns its path. base is kubesim's default node,
// asked for only if options change it.
func writeConfig(dir, name string, s *settings, base func() (*corev1.Node, error)) (string, error) {
	c := v1alpha1.Cluster{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion, Kind: v1alpha1.ClusterKind},
		Name:     name, Nodes: s.nodes, Stages: s.stageSet, DisableDPDBController: s.noDPDB, ExtraArgs: s.extraArgs,
	}
	node, err := s.group.node(base)
	if err != nil {
		return "", err
	}
	if node != nil {
		node.APIVersion, node.Kind = "v1", "Node"
		node.Name = "" // kubesim names each node
		path := filepath.Join(dir, "node-template.yaml")
		if err := writeYAML(path, node); err != nil {
			return "", err
		}
		c.NodeTemplate = path
	}
	if fl := s.failure; fl != nil {
		// The node-lifecycle controller checks nodes every period, which
		// must be shorter than the grace period; 1s keeps detection prompt.
		c.NodeLifecycle = v1alpha1.NodeLifecycle{
			NodeMonitorPeriod:      duration(min(time.Second, fl.notReadyAfter/2)),
			NodeMonitorGracePeriod: duration(fl.notReadyAfter),
			PodEvictionToleration:  duration(fl.evictAfter),
		}
	}
	if d := s.desched; d != nil {
		c.Descheduler = v1alpha1.Descheduler{Profiles: d.profiles, Interval: duration(d.interval)}
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

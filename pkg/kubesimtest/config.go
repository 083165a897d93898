package kubesimtest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// clusterFile is the part of kubesim's Cluster file (kubesim.io/v1alpha1,
// apis/kubesim/v1alpha1 in kubesim's module) that the options set. It is
// written here, not imported: kubesim's module pulls in k8s.io/kubernetes.
type clusterFile struct {
	APIVersion            string              `json:"apiVersion"`
	Kind                  string              `json:"kind"`
	Name                  string              `json:"name"`
	Nodes                 int                 `json:"nodes,omitempty"`
	NodeTemplate          string              `json:"nodeTemplate,omitempty"`
	Stages                string              `json:"stages,omitempty"`
	NodeLifecycle         *nodeLifecycle      `json:"nodeLifecycle,omitempty"`
	Descheduler           *deschedulerFile    `json:"descheduler,omitempty"`
	DisableDPDBController bool                `json:"disableDPDBController,omitempty"`
	ExtraArgs             map[string][]string `json:"extraArgs,omitempty"`
}

// Durations are written as Go durations ("10s"), which kubesim's
// metav1.Duration fields read.
type nodeLifecycle struct {
	NodeMonitorPeriod      string `json:"nodeMonitorPeriod,omitempty"`
	NodeMonitorGracePeriod string `json:"nodeMonitorGracePeriod,omitempty"`
	PodEvictionToleration  string `json:"podEvictionToleration,omitempty"`
}

type deschedulerFile struct {
	Profiles []string `json:"profiles"`
	Interval string   `json:"interval"`
}

// writeConfig writes the Cluster file (and the node template it names)
// into dir and returns its path.
func writeConfig(dir, name string, s *settings) (string, error) {
	f := clusterFile{
		APIVersion: "kubesim.io/v1alpha1", Kind: "Cluster", Name: name,
		Nodes: s.nodes, Stages: s.stageSet, DisableDPDBController: s.noDPDB, ExtraArgs: s.extraArgs,
	}
	if s.group.template != nil {
		node := s.group.template.DeepCopy()
		node.APIVersion, node.Kind = "v1", "Node"
		node.Name = "" // kubesim names each node
		path := filepath.Join(dir, "node-template.yaml")
		if err := writeYAML(path, node); err != nil {
			return "", err
		}
		f.NodeTemplate = path
	}
	if fl := s.failure; fl != nil {
		// The node-lifecycle controller checks nodes every period, which
		// must be shorter than the grace period; 1s keeps detection prompt.
		f.NodeLifecycle = &nodeLifecycle{
			NodeMonitorPeriod:      min(time.Second, fl.notReadyAfter/2).String(),
			NodeMonitorGracePeriod: fl.notReadyAfter.String(),
			PodEvictionToleration:  fl.evictAfter.String(),
		}
	}
	if d := s.desched; d != nil {
		f.Descheduler = &deschedulerFile{Profiles: d.profiles, Interval: d.interval.String()}
	}
	path := filepath.Join(dir, "cluster.yaml")
	return path, writeYAML(path, f)
}

func writeYAML(path string, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o600)
}

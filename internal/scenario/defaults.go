package scenario

import (
	"path/filepath"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// setDefaults fills in what a scenario file may leave out: one cluster
// when it names none, paths relative to dir (the file's directory), and
// each step kind's own defaults. It runs before validate, as the API
// machinery defaults before it validates, so validate changes nothing.
func setDefaults(s *v1alpha1.Scenario, dir string) {
	if s.Cluster == nil && len(s.Clusters) == 0 {
		s.Cluster = &v1alpha1.ScenarioCluster{}
	}
	if s.Cluster != nil {
		setClusterDefaults(s.Cluster, dir)
	}
	for i := range s.Clusters {
		setClusterDefaults(&s.Clusters[i], dir)
	}
	setStepDefaults(s.Steps, dir)
}

func setClusterDefaults(c *v1alpha1.ScenarioCluster, dir string) {
	if c.From != "" {
		c.From = resolve(dir, c.From)
	}
	if c.AuditPolicy != "" {
		c.AuditPolicy = resolve(dir, c.AuditPolicy)
	}
	for i, f := range c.StageFiles {
		c.StageFiles[i] = resolve(dir, f)
	}
	if c.KueueConfig != "" {
		c.KueueConfig = resolve(dir, c.KueueConfig)
	}
	if c.Descheduler.Policy != "" {
		c.Descheduler.Policy = resolve(dir, c.Descheduler.Policy)
	}
	if k := c.Autoscaler.Karpenter; k != nil && k.InstanceTypes != "" {
		k.InstanceTypes = resolve(dir, k.InstanceTypes)
	}
	for i := range c.NodeGroups {
		if g := &c.NodeGroups[i]; g.Template != "" {
			g.Template = resolve(dir, g.Template)
		}
	}
}

func setStepDefaults(steps []v1alpha1.Step, dir string) {
	for i := range steps {
		for _, k := range stepKinds.setOn(&steps[i]) {
			if k.setDefaults != nil {
				k.setDefaults(&steps[i], dir)
			}
		}
	}
}

func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

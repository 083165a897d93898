package kubesimtest

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Spec sets any of the Cluster file's options, beside the typed options.
func TestSpecOption(t *testing.T) {
	s := &settings{}
	limit := resource.MustParse("1Gi")
	for _, opt := range []Option{
		StageSet("realistic"),
		Spec(func(c *v1alpha1.ClusterSpec) {
			c.MemoryLimit = &limit
			c.Networking.NodeSubnet = "10.200.0.0/16"
		}),
		WithoutUsageMetrics(),
	} {
		if err := opt(s); err != nil {
			t.Fatal(err)
		}
	}
	path, err := writeConfig(t.TempDir(), "kt-x", s)
	if err != nil {
		t.Fatal(err)
	}
	var c v1alpha1.Cluster
	readYAML(t, path, &c)
	if c.Name != "kt-x" || c.Stages != "realistic" || c.MemoryLimit.String() != "1Gi" ||
		c.Networking.NodeSubnet != "10.200.0.0/16" || !c.Usage.Disabled {
		t.Errorf("cluster.yaml: %+v", c)
	}
}

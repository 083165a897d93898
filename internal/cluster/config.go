package cluster

import (
	"os"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
)

// LoadConfig reads a kubesim.io/v1alpha1 Cluster file strictly: a field
// kubesim does not know is an error that names it. A file that cannot be
// read is the operating system's error (an *fs.PathError).
func LoadConfig(path string) (*v1alpha1.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &v1alpha1.Cluster{}
	if err := manifest.Decode(data, c, v1alpha1.GroupVersion, v1alpha1.ClusterKind); err != nil {
		return nil, err
	}
	return c, nil
}

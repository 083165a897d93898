package cluster

import (
	"os"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
)

// LoadConfig reads a kubesim.io/v1alpha1 Cluster file strictly: a field
// kubesim does not know is an error that names it, a *manifest.Error
// with its line (manifest.InFile says it with the file). A file that
// cannot be read is the operating system's error (an *fs.PathError).
func LoadConfig(path string) (*v1alpha1.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &v1alpha1.Cluster{}
	root, err := manifest.DecodeFile(data, c, v1alpha1.GroupVersion, v1alpha1.ClusterKind)
	if err != nil {
		return nil, err
	}
	// timeScale: 0 reads as no timeScale, real time: refused, as
	// --time-scale 0 is, rather than taken for what was not asked.
	if n, given := manifest.Lookup(root, "timeScale"); given && c.TimeScale == 0 {
		return nil, &manifest.Error{Line: n.Line, Path: "timeScale", Msg: "timeScale: " + v1alpha1.CheckTimeScale(0).Error()}
	}
	return c, nil
}

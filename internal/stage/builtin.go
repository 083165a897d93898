package stage

import (
	"embed"
	"fmt"
	"path"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
)

// builtinFS holds the default lifecycle: node-initialize, node-heartbeat,
// pod-ready, pod-readiness-gates, pod-complete, pod-delete.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the default stages, compiled.
func Builtin() ([]*Stage, error) {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		return nil, err
	}
	var out []*Stage
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			return nil, err
		}
		s, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("built-in stage %s: %w", e.Name(), err)
		}
		c, err := Compile(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Parse reads one Stage manifest strictly: unknown fields are errors.
func Parse(data []byte) (*v1alpha1.Stage, error) {
	s := &v1alpha1.Stage{}
	if err := manifest.Decode(data, s, v1alpha1.GroupVersion, v1alpha1.StageKind); err != nil {
		return nil, err
	}
	return s, nil
}

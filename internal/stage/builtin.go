package stage

import (
	"embed"
	"fmt"
	"path"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
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
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	s := &v1alpha1.Stage{}
	strictErrs, err := kjson.UnmarshalStrict(jsonData, s, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		return nil, strictErrs[0]
	}
	if s.APIVersion != v1alpha1.GroupVersion || s.Kind != v1alpha1.StageKind {
		return nil, fmt.Errorf("apiVersion/kind: got %q/%q, want %s/%s", s.APIVersion, s.Kind, v1alpha1.GroupVersion, v1alpha1.StageKind)
	}
	return s, nil
}

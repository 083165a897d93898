package stage

import (
	"fmt"
	"io/fs"
	"path"
	"slices"

	kubesimv1alpha1 "github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/deploy"
	"github.com/kubesim/kubesim/internal/manifest"
)

// Sets are the built-in stage sets a cluster can run, the first the
// default. Each is its own pod lifecycle plus the shared node and pod
// stages and the label-triggered chaos stages.
var Sets = kubesimv1alpha1.StageSets

// BuiltinRevision marks built-in stages, where user stages carry their
// resourceVersion.
const BuiltinRevision = "builtin"

// Builtin returns the stages of a built-in set, compiled.
func Builtin(set string) ([]*Stage, error) {
	if !slices.Contains(Sets, set) {
		return nil, fmt.Errorf("stage set %q: must be one of %v", set, Sets)
	}
	var out []*Stage
	for _, dir := range []string{"node", "pod", set, "chaos", "devices"} {
		entries, err := fs.ReadDir(deploy.Stages, path.Join("stages", dir))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := path.Join("stages", dir, e.Name())
			data, err := fs.ReadFile(deploy.Stages, name)
			if err != nil {
				return nil, err
			}
			s, err := Parse(data)
			if err != nil {
				return nil, fmt.Errorf("built-in stage %s: %w", name, err)
			}
			c, err := Compile(s)
			if err != nil {
				return nil, err
			}
			c.Revision = BuiltinRevision
			out = append(out, c)
		}
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

// Merge returns the built-in stages with user stages laid over them: a user
// stage replaces the built-in one of the same name.
func Merge(builtin, user []*Stage) []*Stage {
	byName := map[string]*Stage{}
	for _, s := range builtin {
		byName[s.Name] = s
	}
	for _, s := range user {
		byName[s.Name] = s
	}
	out := make([]*Stage, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	return out
}

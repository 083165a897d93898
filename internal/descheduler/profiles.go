package descheduler

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// profileFS holds the named profiles as OpenShift's Kube Descheduler
// Operator defines them, each a descheduler/v1alpha2 DeschedulerPolicy.
// Namespaces it never touches are kube-system's (OpenShift also lists its
// own, which a kubesim cluster does not have).
//
//go:embed profiles/*.yaml
var profileFS embed.FS

// Profiles are the names of the built-in profiles.
var Profiles = []string{
	"AffinityAndTaints", "TopologyAndDuplicates", "SoftTopologyAndDuplicates",
	"LifecycleAndUtilization", "LongLifecycle", "CompactAndScale",
}

// ProfilePolicy expands named profiles into one v1alpha2 policy.
func ProfilePolicy(names []string) ([]byte, error) {
	if len(names) == 1 {
		return profile(names[0])
	}
	var profiles []any
	for _, name := range names {
		data, err := profile(name)
		if err != nil {
			return nil, err
		}
		var policy map[string]any
		if err := yaml.Unmarshal(data, &policy); err != nil {
			return nil, err
		}
		profiles = append(profiles, policy["profiles"].([]any)...)
	}
	return yaml.Marshal(map[string]any{
		"apiVersion": "descheduler/v1alpha2",
		"kind":       "DeschedulerPolicy",
		"profiles":   profiles,
	})
}

func profile(name string) ([]byte, error) {
	if !slices.Contains(Profiles, name) {
		return nil, fmt.Errorf("unknown profile %q; use one of %s", name, strings.Join(Profiles, ", "))
	}
	return profileFS.ReadFile(path.Join("profiles", name+".yaml"))
}

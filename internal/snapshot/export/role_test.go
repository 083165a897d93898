package export

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/deploy"
)

// The ClusterRole shipped for exports grants get and list of every kind
// export reads, and nothing more.
func TestSnapshotReaderRoleGrantsExactlyWhatExportReads(t *testing.T) {
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(deploy.SnapshotReaderClusterRole, &role); err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	for _, rule := range role.Rules {
		if !slices.Equal(rule.Verbs, []string{"get", "list"}) {
			t.Errorf("rule %v: verbs %v, want get and list only", rule.Resources, rule.Verbs)
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				granted[g+"/"+r] = true
			}
		}
	}
	for _, k := range kinds {
		key := k.Group + "/" + k.Resource
		if !granted[key] {
			t.Errorf("%s is read by export but not granted", key)
		}
		delete(granted, key)
	}
	for key := range granted {
		t.Errorf("%s is granted but export never reads it", key)
	}
}

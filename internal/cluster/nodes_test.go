package cluster

import (
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scale"
)

// Every group's template is read, and its errors named, before anything
// is made; nodes: N is the unnamed group.
func TestCreateOptions(t *testing.T) {
	shorthand := &v1alpha1.Cluster{ClusterSpec: v1alpha1.ClusterSpec{Nodes: 3}}
	got, err := createOptions(shorthand, scale.Options{Wait: 5})
	if err != nil || len(got) != 1 || got[0].Replicas != 3 || got[0].Group.Name != "" || got[0].Wait != 5 {
		t.Errorf("nodes: 3 → %+v, %v; want the unnamed group of 3", got, err)
	}
	if got, err := createOptions(&v1alpha1.Cluster{}, scale.Options{}); err != nil || len(got) != 0 {
		t.Errorf("no nodes → %+v, %v; want none", got, err)
	}
	groups := &v1alpha1.Cluster{ClusterSpec: v1alpha1.ClusterSpec{NodeGroups: []v1alpha1.NodeGroup{{Name: "a", Count: 1}, {Name: "b", Count: 2, Template: "/no/such/node.yaml"}}}}
	if _, err := createOptions(groups, scale.Options{}); err == nil || !strings.HasPrefix(err.Error(), "nodeGroups[1].template: open /no/such/node.yaml") {
		t.Errorf("a missing template: %v, want nodeGroups[1].template: open …", err)
	}
	groups.NodeGroups[1].Template = ""
	got, err = createOptions(groups, scale.Options{Wait: 5})
	if err != nil || len(got) != 2 || got[1].Group.Name != "b" || got[1].Replicas != 2 || got[1].Wait != 5 {
		t.Errorf("two groups → %+v, %v", got, err)
	}
	labelled := scale.Options{Group: v1alpha1.NodeGroup{Labels: map[string]string{"zone": "a"}}}
	if _, err := createOptions(groups, labelled); err == nil || !strings.HasPrefix(err.Error(), "--node-label:") {
		t.Errorf("--node-label with nodeGroups: %v, want it refused", err)
	}
}

func TestGroupList(t *testing.T) {
	if got := groupList([]v1alpha1.NodeGroup{{Count: 1}, {Name: "worker"}, {Name: "gpu"}}); !strings.HasPrefix(got, "its groups are worker, gpu, and the unnamed group") {
		t.Errorf("groupList: %s", got)
	}
	if got := groupList(nil); !strings.HasPrefix(got, "it has only the unnamed group") {
		t.Errorf("groupList of none: %s", got)
	}
}

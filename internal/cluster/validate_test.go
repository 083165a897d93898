package cluster

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/kubeversion"
)

// The checks made before asking the component itself (an e2e test covers
// that part: it needs the kubesim binary).
func TestValidateExtraArgsNamesTheField(t *testing.T) {
	for want, extra := range map[string]map[string][]string{
		"extraArgs.etcd: not an upstream component":        {"etcd": {"--v=2"}},
		`extraArgs.kube-scheduler[1]: "v=2" is not a flag`: {"kube-scheduler": {"--v=1", "v=2"}},
		`extraArgs.kube-apiserver[0]: "--" is not a flag`:  {"kube-apiserver": {"--"}},
	} {
		err := validateExtraArgs(kubeversion.Default(), extra)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: got %v, want an error containing %q", extra, err, want)
		}
	}
}

func TestCreateRefusesTooManyNodesBeforeBuildingAnything(t *testing.T) {
	p, _ := writeKubeconfig(t, foreignKubeconfig, 0o600)
	err := p.Create(context.Background(), &v1alpha1.Cluster{Name: "blue", ClusterSpec: v1alpha1.ClusterSpec{Nodes: 1_000_001}}, CreateOptions{})
	if err == nil || err.Error() != "nodes (--nodes): must be between 0 and 1000000, got 1000001" {
		t.Fatalf("Create with 1000001 nodes = %v", err)
	}
	if _, err := os.Stat(clusterdir.ClustersPath(p.Home)); !os.IsNotExist(err) {
		t.Errorf("Create refused the config but made %s: %v", clusterdir.ClustersPath(p.Home), err)
	}
}

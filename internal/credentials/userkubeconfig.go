package credentials

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/pki"
)

// The user's kubeconfig holding a cluster's context is the file create or
// the last start merged it into ($KUBECONFIG, ~/.kube/config or
// --kubeconfig, as that command saw them). The cluster keeps its path, so
// that the supervisor, which runs detached from that command, can follow
// a move of the API server's port there.

// RecordUserKubeconfig keeps path (made absolute) as the user's
// kubeconfig that holds the cluster's context.
func RecordUserKubeconfig(d clusterdir.Dir, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return pki.WriteFileAtomic(d.UserKubeconfigFile(), []byte(abs+"\n"))
}

// UserKubeconfig is the path RecordUserKubeconfig kept. Of a cluster that
// no kubesim keeping it has created or started, the error wraps
// os.ErrNotExist.
func UserKubeconfig(d clusterdir.Dir) (string, error) {
	data, err := os.ReadFile(d.UserKubeconfigFile())
	if err != nil {
		return "", err
	}
	path := strings.TrimSpace(string(data))
	if path == "" {
		return "", fmt.Errorf("%s is empty: %w", d.UserKubeconfigFile(), os.ErrNotExist)
	}
	return path, nil
}

// AdminContext is the cluster's admin kubeconfig as YAML, with the
// cluster, user and context kubesim-<name> that are merged into the
// user's kubeconfig.
func AdminContext(d clusterdir.Dir, c *v1alpha1.Cluster) ([]byte, error) {
	admin, err := AdminKubeconfig(d, c)
	if err != nil {
		return nil, err
	}
	return clientcmd.Write(*admin)
}

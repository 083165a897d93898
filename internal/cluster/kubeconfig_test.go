package cluster

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// newTestCluster lays out a cluster's files (no processes) under a temp home.
func newTestCluster(t *testing.T, p *Provider, name string) clusterdir.Dir {
	t.Helper()
	c := &v1alpha1.Cluster{Name: name}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{}
	d := clusterdir.For(p.Home, name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeClusterFiles(d, c); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestUseContextMergesAndRemoveContextUnmerges(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	existing := clientcmdapi.NewConfig()
	existing.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	existing.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "t"}
	existing.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	existing.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*existing, kubeconfig); err != nil {
		t.Fatal(err)
	}
	p := &Provider{Home: filepath.Join(dir, "home"), Kubeconfig: kubeconfig, Out: io.Discard}
	blue := newTestCluster(t, p, "blue")
	red := newTestCluster(t, p, "red")

	if err := p.useContext(blue); err != nil {
		t.Fatal(err)
	}
	if err := p.useContext(red); err != nil {
		t.Fatal(err)
	}
	got, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prod", "kubesim-blue", "kubesim-red"} {
		if got.Contexts[name] == nil {
			t.Errorf("context %s missing after merge", name)
		}
	}
	if got.CurrentContext != "kubesim-red" {
		t.Errorf("current context %q, want kubesim-red", got.CurrentContext)
	}
	if srv := got.Clusters["kubesim-blue"].Server; !strings.HasPrefix(srv, "https://127.0.0.1:") {
		t.Errorf("blue's server %q is not a loopback https URL", srv)
	}
	if len(got.AuthInfos["kubesim-blue"].ClientCertificateData) == 0 {
		t.Error("blue's user has no client certificate")
	}

	// Removing a context that is not current leaves the current one.
	if err := p.removeContext("blue"); err != nil {
		t.Fatal(err)
	}
	got, _ = clientcmd.LoadFromFile(kubeconfig)
	if got.Contexts["kubesim-blue"] != nil || got.Clusters["kubesim-blue"] != nil || got.AuthInfos["kubesim-blue"] != nil {
		t.Error("blue's entries survive removal")
	}
	if got.CurrentContext != "kubesim-red" || got.Contexts["prod"] == nil {
		t.Errorf("removing blue disturbed others: current %q, contexts %v", got.CurrentContext, got.Contexts)
	}
	// Removing the current one clears current-context, as kind does.
	if err := p.removeContext("red"); err != nil {
		t.Fatal(err)
	}
	got, _ = clientcmd.LoadFromFile(kubeconfig)
	if got.CurrentContext != "" || got.Contexts["prod"] == nil {
		t.Errorf("after removing the current context: current %q, contexts %v", got.CurrentContext, got.Contexts)
	}
	if info, _ := os.Stat(kubeconfig); info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %o, want 600", info.Mode().Perm())
	}
}

func TestCheckKubeconfigWritable(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new", "config")
	p := &Provider{Kubeconfig: fresh}
	if err := p.checkKubeconfigWritable(); err != nil {
		t.Fatalf("a new kubeconfig in a new directory: %v", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the check left a file behind: %v", err)
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.Kubeconfig = filepath.Join(blocker, "config")
	if err := p.checkKubeconfigWritable(); err == nil || !strings.Contains(err.Error(), "cannot be written") {
		t.Errorf("kubeconfig beneath a file: %v", err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("{{{not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Kubeconfig = garbage
	if err := p.checkKubeconfigWritable(); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("unreadable kubeconfig: %v", err)
	}
}

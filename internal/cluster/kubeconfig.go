package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
)

// pathOptions says which kubeconfig files to read and write, as kubectl
// would: p.Kubeconfig if set, else $KUBECONFIG, else ~/.kube/config.
func (p *Provider) pathOptions() *clientcmd.PathOptions {
	po := clientcmd.NewDefaultPathOptions()
	po.LoadingRules.ExplicitPath = p.Kubeconfig
	return po
}

// UserKubeconfig is the file a new context is written to.
func (p *Provider) UserKubeconfig() string { return p.pathOptions().GetDefaultFilename() }

// checkKubeconfigWritable fails early, before a cluster is made, if the
// user's kubeconfig cannot take the new context.
func (p *Provider) checkKubeconfigWritable() error {
	path := p.UserKubeconfig()
	fail := func(err error) error {
		return fmt.Errorf("kubeconfig %s cannot be written (%v); point --kubeconfig or KUBECONFIG at a writable file", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fail(err)
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fail(err)
	}
	f.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		os.Remove(path) // only probing; written for real once the cluster is up
	}
	if _, err := p.pathOptions().GetStartingConfig(); err != nil {
		return fmt.Errorf("kubeconfig %s cannot be read: %v; fix or move it, or point --kubeconfig at another file", path, err)
	}
	return nil
}

// useContext merges the cluster's admin context into the user's kubeconfig
// and makes it current, as `kind create cluster` does.
func (p *Provider) useContext(d clusterdir.Dir) error {
	c, err := d.Load()
	if err != nil {
		return err
	}
	admin, err := controlplane.AdminKubeconfig(d, c)
	if err != nil {
		return err
	}
	name := controlplane.ContextName(c.Name)
	err = p.modifyKubeconfig(func(cfg *clientcmdapi.Config) {
		cfg.Clusters[name] = admin.Clusters[name]
		cfg.AuthInfos[name] = admin.AuthInfos[name]
		cfg.Contexts[name] = admin.Contexts[name]
		cfg.CurrentContext = name
	})
	if err != nil {
		return fmt.Errorf("writing context %s to %s: %w", name, p.UserKubeconfig(), err)
	}
	p.logf("Set kubectl context to %q", name)
	return nil
}

// removeContext takes a cluster's context out of the user's kubeconfig.
func (p *Provider) removeContext(clusterName string) error {
	name := controlplane.ContextName(clusterName)
	return p.modifyKubeconfig(func(cfg *clientcmdapi.Config) {
		delete(cfg.Clusters, name)
		delete(cfg.AuthInfos, name)
		delete(cfg.Contexts, name)
		if cfg.CurrentContext == name {
			cfg.CurrentContext = ""
		}
	})
}

// modifyKubeconfig applies change to the user's kubeconfig under
// client-go's lock file, retrying while another writer holds it.
func (p *Provider) modifyKubeconfig(change func(*clientcmdapi.Config)) error {
	po := p.pathOptions()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cfg, err := po.GetStartingConfig()
		if err != nil {
			return err
		}
		change(cfg)
		err = clientcmd.ModifyConfig(po, *cfg, false)
		if err == nil || time.Now().After(deadline) || !isLockErr(err) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// isLockErr reports whether err is client-go failing to take the lock
// file (it exists: another writer is at work).
func isLockErr(err error) bool { return errors.Is(err, os.ErrExist) }

// CurrentCluster is the cluster the user's kubeconfig points at — its
// current context is kubesim-<name> and that cluster exists — or the
// default cluster name otherwise.
func (p *Provider) CurrentCluster() string {
	cfg, err := p.pathOptions().GetStartingConfig()
	if err != nil {
		return v1alpha1.DefaultClusterName
	}
	name, ok := strings.CutPrefix(cfg.CurrentContext, controlplane.ContextName(""))
	if !ok {
		return v1alpha1.DefaultClusterName
	}
	if _, _, err := p.open(name); err != nil {
		return v1alpha1.DefaultClusterName
	}
	return name
}

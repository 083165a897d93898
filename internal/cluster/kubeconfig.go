package cluster

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/kubeconfig"
)

// pathOptions says which kubeconfig files to read, as kubectl would:
// p.Kubeconfig if set, else $KUBECONFIG's files, else ~/.kube/config.
func (p *Provider) pathOptions() *clientcmd.PathOptions {
	po := clientcmd.NewDefaultPathOptions()
	po.LoadingRules.ExplicitPath = p.Kubeconfig
	return po
}

// UserKubeconfig is the file a new context is written to.
func (p *Provider) UserKubeconfig() string { return p.pathOptions().GetDefaultFilename() }

// checkKubeconfigWritable fails early, before a cluster is made, if the
// user's kubeconfig cannot take the new context: its lock stays held, or
// it cannot be written or read.
func (p *Provider) checkKubeconfigWritable() error {
	path := p.UserKubeconfig()
	switch err := kubeconfig.Check(path); {
	case errors.Is(err, kubeconfig.ErrLocked):
		return err // it names the lock file and what to do
	case err != nil:
		return fmt.Errorf("kubeconfig %s cannot be written (%v); point --kubeconfig or KUBECONFIG at a writable file", path, err)
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
	ours, err := credentials.AdminContext(d, c)
	if err != nil {
		return err
	}
	name := credentials.ContextName(c.Name)
	if err := p.editKubeconfig(func(doc *kubeconfig.Doc) error { return doc.Merge(ours, name) }); err != nil {
		return fmt.Errorf("writing context %s to %s: %w", name, p.UserKubeconfig(), err)
	}
	p.logf("Set kubectl context to %q", name)
	return nil
}

// recordKubeconfig keeps, with the cluster, the user's kubeconfig its
// context is merged into, so that its supervisor can follow a move of the
// API server's port there.
func (p *Provider) recordKubeconfig(d clusterdir.Dir) error {
	return credentials.RecordUserKubeconfig(d, p.UserKubeconfig())
}

// removeContext takes a cluster's context out of the user's kubeconfig;
// it reports whether the context was there.
func (p *Provider) removeContext(clusterName string) (removed bool, err error) {
	err = p.editKubeconfig(func(doc *kubeconfig.Doc) error {
		removed, err = doc.Remove(credentials.ContextName(clusterName))
		return err
	})
	return removed, err
}

// editKubeconfig changes the user's kubeconfig (see kubeconfig.Edit), and
// says so when it had to make the file private.
func (p *Provider) editKubeconfig(change func(*kubeconfig.Doc) error) error {
	path := p.UserKubeconfig()
	tightenedFrom, err := kubeconfig.Edit(path, change)
	if tightenedFrom != 0 {
		p.logf("Note: %s was mode %04o; it holds an admin key now, so it is 0600", path, tightenedFrom)
	}
	return err
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// Start starts a stopped cluster and waits until it is ready.
func (p *Provider) Start(ctx context.Context, name string, wait time.Duration) error {
	return p.operate(ctx, name, func(clusterdir.Dir) error {
		d, c, err := p.open(name)
		if err != nil {
			return err
		}
		// Its pod controllers would stay held: no workload would get pods.
		if _, err := os.Stat(controlplane.PodControllersHeldFile(d)); err == nil {
			return fmt.Errorf("cluster %q is broken (%s): kubesim delete cluster --name %s", name, interruptedCause, name)
		}
		if supervisor.Running(d) {
			p.logf("Cluster %q is already running", name)
			return nil
		}
		if err := checkExplicitPort(c); err != nil {
			return err
		}
		if err := p.recoverEtcd(d); err != nil {
			return err
		}
		if err := supervisor.Disown(d); err != nil {
			return err
		}
		if err := p.recordKubeconfig(d); err != nil {
			return err
		}
		p.logf("Starting cluster %q ...", name)
		started := time.Now()
		if err := supervisor.Launch(ctx, p.Home, d, wait); err != nil {
			return err
		}
		if err := p.useContext(d); err != nil {
			return err
		}
		p.logf("Cluster %q is ready (%.1fs)", name, time.Since(started).Seconds())
		return nil
	})
}

// Stop stops a running cluster's processes; its data stays.
func (p *Provider) Stop(ctx context.Context, name string) error {
	return p.operate(ctx, name, func(clusterdir.Dir) error {
		d, _, err := p.open(name)
		if err != nil {
			return err
		}
		if !supervisor.Running(d) {
			p.logf("Cluster %q is already stopped", name)
			return nil
		}
		if err := supervisor.Stop(ctx, d, p.logf); err != nil {
			return err
		}
		p.logf("Cluster %q stopped", name)
		return nil
	})
}

// Delete stops a cluster, removes its files and its kubeconfig context. A
// cluster whose directory a crash left without its config is deleted too,
// and of one whose directory is gone, its leftover context.
func (p *Provider) Delete(ctx context.Context, name string) error {
	d, err := p.dir(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(d.Path); errors.Is(err, os.ErrNotExist) {
		return p.deleteLeftoverContext(name)
	}
	return p.operate(ctx, name, func(d clusterdir.Dir) error {
		if err := p.remove(ctx, d); err != nil {
			return err
		}
		p.logf("Deleted cluster %q", name)
		return nil
	})
}

// deleteLeftoverContext removes the context of a cluster that is gone (its
// files removed by hand, or an older kubesim's failed create), if any.
func (p *Provider) deleteLeftoverContext(name string) error {
	removed, err := p.removeContext(name)
	if err != nil {
		return err
	}
	if !removed {
		return clusterdir.NotExist(name)
	}
	p.logf("Cluster %q does not exist; removed its leftover context %q from %s", name, credentials.ContextName(name), p.UserKubeconfig())
	return nil
}

// DeleteAll deletes every cluster, whole or not.
func (p *Provider) DeleteAll(ctx context.Context) error {
	names, err := clusterdir.ListDirs(p.Home)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, p.Delete(ctx, name))
	}
	return errors.Join(errs...)
}

// remove stops whatever of d runs and removes its context and its files;
// the caller holds d's operation lock.
func (p *Provider) remove(ctx context.Context, d clusterdir.Dir) error {
	if supervisor.Running(d) {
		// Killed, not stopped: nothing of it is kept to need a clean stop.
		if err := supervisor.Kill(ctx, d, p.logf); err != nil {
			return err
		}
	}
	_, err := p.removeContext(d.Name)
	return errors.Join(os.RemoveAll(d.Path), err)
}

package cluster

import (
	"context"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/kubeversion"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// UpgradeKubernetes moves the cluster's control plane to the Kubernetes
// minor version to, the next after the one it runs (upstream's version
// skew policy). A running cluster is upgraded in place, as a real one is:
// the API server first, then the controller-manager and the scheduler,
// each once the one before is ready, with etcd's data and every other
// component (the simulated nodes among them) running throughout; a
// stopped one starts at the new version.
func (p *Provider) UpgradeKubernetes(ctx context.Context, name, to string, wait time.Duration) error {
	return p.operate(ctx, name, func(clusterdir.Dir) error {
		d, c, err := p.open(name)
		if err != nil {
			return err
		}
		target, err := kubeversion.Lookup(to)
		if err != nil {
			return err
		}
		current, err := kubeversion.Lookup(c.Kubernetes)
		if err != nil {
			return err
		}
		if err := kubeversion.CheckUpgrade(current, target); err != nil {
			return err
		}
		if !supervisor.Running(d) {
			c.Kubernetes, c.Status.KubernetesVersion = target.Minor, target.Release
			if err := d.Save(c); err != nil {
				return err
			}
			p.logf("Cluster %q is stopped: it starts at Kubernetes %s (was %s)", name, target.Release, current.Release)
			return nil
		}
		p.logf("Upgrading cluster %q from Kubernetes %s to %s: kube-apiserver, then kube-controller-manager and kube-scheduler ...", name, current.Release, target.Release)
		started := time.Now()
		if err := supervisor.Upgrade(ctx, d, target, wait); err != nil {
			return err
		}
		p.logf("Cluster %q runs Kubernetes %s (%.1fs)", name, target.Release, time.Since(started).Seconds())
		return nil
	})
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/karpenter"
	"github.com/kubesim/kubesim/internal/kubeversion"
	"github.com/kubesim/kubesim/internal/kueue"
	"github.com/kubesim/kubesim/internal/scale"
	"github.com/kubesim/kubesim/internal/supervisor"
	kubesimversion "github.com/kubesim/kubesim/internal/version"
)

// CreateOptions are about one `create` run, not about the cluster.
type CreateOptions struct {
	// Wait bounds the time to become ready.
	Wait time.Duration
	// Retain keeps a cluster that failed to come up, for its logs.
	Retain bool
	// Nodes describe the unnamed group of the config's nodes: N (its
	// template and labels, from flags), and how every group's nodes show
	// their progress and are waited for once the cluster is ready.
	Nodes scale.Options
	// OwnerPID, if set, is the process whose exit stops the cluster.
	OwnerPID int
	// holdPodControllers starts the cluster with the controller-manager's
	// pod controllers held (controlplane.PodControllersHeldFile), for a
	// clone to load its objects.
	holdPodControllers bool
}

// Create makes a new cluster from c (defaulted and validated here), starts
// it and waits until it is ready, then makes its context current in the
// user's kubeconfig. On failure nothing of the new cluster is left behind,
// unless opts.Retain, and no other cluster is touched.
func (p *Provider) Create(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) error {
	if c.From != "" || c.FromContext != "" {
		return p.createClone(ctx, c, opts)
	}
	return p.create(ctx, c, opts)
}

// create is Create of a cluster that is no clone.
func (p *Provider) create(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) error {
	unlock, err := p.createLocked(ctx, c, opts)
	if err == nil {
		unlock()
	}
	return err
}

// createLocked is create, but returns holding the new cluster's operation
// lock, for a clone to load it before any other command works on it.
func (p *Provider) createLocked(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) (unlock func(), err error) {
	started := time.Now()
	if c.Status != nil {
		return nil, errors.New("status: is written by kubesim; remove it from the config")
	}
	c.SetDefaults()
	if err := validate(c); err != nil {
		return nil, err
	}
	if c.Status, err = resolveStatus(c); err != nil {
		return nil, err
	}
	groups, err := createOptions(c, opts.Nodes)
	if err != nil {
		return nil, err
	}
	if err := resolveNodeCIDRs(c, groups, opts.Nodes); err != nil {
		return nil, err
	}
	if err := absTemplates(c.NodeGroups); err != nil {
		return nil, err
	}
	var owner supervisor.Owner
	if opts.OwnerPID != 0 {
		if owner, err = supervisor.NewOwner(opts.OwnerPID); err != nil {
			return nil, err
		}
	}
	if err := checkExplicitPort(c); err != nil {
		return nil, err
	}
	if err := p.checkKubeconfigWritable(); err != nil {
		return nil, err
	}

	d := clusterdir.For(p.Home, c.Name)
	if err := controlplane.CheckSocketPath(d); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(clusterdir.ClustersPath(p.Home), 0o700); err != nil {
		return nil, err
	}
	// Mkdir is atomic: of two creates of one name, exactly one gets here.
	if err := os.Mkdir(d.Path, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cluster %q already exists (delete it first, or choose another --name)", c.Name)
		}
		return nil, err
	}
	release, err := p.lockOperation(ctx, d)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err == nil {
			return
		}
		if !opts.Retain {
			if rmErr := p.remove(context.Background(), d); rmErr != nil {
				err = fmt.Errorf("%w (cleaning up also failed: %v)", err, rmErr)
			}
		}
		release()
	}()
	p.logf("Creating cluster %q ...", c.Name)
	if warning := lowSpaceWarning(p.Home, syscall.Statfs); warning != "" {
		p.logf("Warning: %s", warning)
	}

	if opts.holdPodControllers {
		if err := os.WriteFile(controlplane.PodControllersHeldFile(d), nil, 0o600); err != nil {
			return nil, err
		}
	}
	if err := writeClusterFiles(d, c); err != nil {
		return nil, err
	}
	if err := p.recordKubeconfig(d); err != nil {
		return nil, err
	}
	if opts.OwnerPID != 0 {
		if err := owner.Write(d); err != nil {
			return nil, err
		}
	}
	p.logf(" ✓ Certificates, keys and kubeconfigs written to %s", d.Path)
	// The wait is for real work: on a scaled clock (kubesim run's) it is
	// that much longer.
	if err := supervisor.Launch(ctx, p.Home, d, clusterclock.Stretch(opts.Wait)); err != nil {
		if !opts.Retain {
			err = fmt.Errorf("%w (run again with --retain to keep the cluster and its logs)", err)
		}
		return nil, err
	}
	p.logf(" ✓ Control plane ready: %s", strings.Join(controlplane.EnabledComponents(c), ", "))
	if err := p.useContext(d); err != nil {
		return nil, err
	}
	if len(groups) > 0 {
		client, err := credentials.AdminClient(d, 0)
		if err != nil {
			return nil, err
		}
		if err := p.makeNodes(ctx, c, client, groups); err != nil {
			return nil, err
		}
	}
	p.logf("Cluster %q is ready (%.1fs). Try: kubectl get ns", c.Name, time.Since(started).Seconds())
	return release, nil
}

// resolveStatus is what kubesim settles for a new cluster before making
// it: the versions, and the policies its components will run, read from
// the user's files now so a bad one is reported at once rather than as a
// component that never starts.
func resolveStatus(c *v1alpha1.Cluster) (*v1alpha1.ClusterStatus, error) {
	v, err := kubeversion.Lookup(c.Kubernetes)
	if err != nil {
		return nil, err
	}
	s := &v1alpha1.ClusterStatus{
		KubernetesVersion: v.Release,
		KubesimVersion:    kubesimversion.Version,
		AuditPolicy:       controlplane.DefaultAuditPolicy,
		FormatVersion:     controlplane.FormatVersion,
	}
	clock, err := clusterclock.New(c.TimeScale)
	if err != nil {
		return nil, err
	}
	s.Clock = clock
	if c.AuditPolicy != "" {
		policy, err := readAuditPolicy(c.AuditPolicy)
		if err != nil {
			return nil, err
		}
		s.AuditPolicy = string(policy)
	}
	stages, err := readStageFiles(c.StageFiles)
	if err != nil {
		return nil, err
	}
	s.Stages = stages
	if c.Descheduler.Enabled() {
		policy, err := resolveDeschedulerPolicy(c.Descheduler)
		if err != nil {
			return nil, err
		}
		s.DeschedulerPolicy = string(policy)
	}
	if k := c.Autoscaler.Karpenter; k != nil && k.InstanceTypes != "" {
		types, err := karpenter.ReadInstanceTypes(k.InstanceTypes)
		if err != nil {
			return nil, err
		}
		s.InstanceTypes = string(types)
	}
	if c.KueueConfig != "" {
		cfg, err := kueue.ReadConfiguration(c.KueueConfig)
		if err != nil {
			return nil, fmt.Errorf("kueueConfig (--kueue-config): %w", err)
		}
		s.KueueConfig = string(cfg)
	}
	return s, nil
}

// writeClusterFiles lays out a new cluster's directory: its resolved
// config with fresh ports, credentials and kubeconfigs. The files each
// component reads are written by the component's Prepare at every start.
func writeClusterFiles(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	for _, dir := range []string{d.Logs(), d.Etcd()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	c.Status.CreatedAt, c.Status.Ports = metav1.Now(), nil
	if err := controlplane.AssignPorts(c); err != nil {
		return err
	}
	if err := credentials.Write(d, c, controlplane.Components()); err != nil {
		return fmt.Errorf("writing credentials: %w", err)
	}
	if err := credentials.WriteKubeconfigs(d, c, controlplane.Identities()); err != nil {
		return err
	}
	// Last: a cluster.yaml means a whole cluster. A crash before it leaves
	// a directory that lists as no cluster and that delete --all removes.
	return d.Save(c)
}

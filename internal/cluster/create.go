package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/component-base/version"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/pki"
	"github.com/kubesim/kubesim/internal/scale"
	kubesimversion "github.com/kubesim/kubesim/internal/version"
)

// CreateOptions are about one `create` run, not about the cluster.
type CreateOptions struct {
	// Wait bounds the time to become ready.
	Wait time.Duration
	// Retain keeps a cluster that failed to come up, for its logs.
	Retain bool
	// Nodes are the simulated nodes to make once the cluster is ready.
	Nodes scale.Options
}

// defaultAuditPolicy records the metadata of every write, leaving out the
// constant churn of Lease renewals and Events, which would drown the rest.
const defaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
  - group: ""
    resources: ["events"]
  - group: events.k8s.io
    resources: ["events"]
- level: Metadata
`

// Create makes a new cluster from c (defaulted and validated here), starts
// it and waits until it is ready, then makes its context current in the
// user's kubeconfig. On failure nothing of the new cluster is left behind,
// unless opts.Retain, and no other cluster is touched.
func (p *Provider) Create(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) (err error) {
	started := time.Now()
	if c.Status != nil {
		return errors.New("status: is written by kubesim; remove it from the config")
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return err
	}
	audit := []byte(defaultAuditPolicy)
	if c.AuditPolicy != "" {
		if audit, err = readAuditPolicy(c.AuditPolicy); err != nil {
			return err
		}
	}
	var deschedulerPolicy []byte
	if c.Descheduler.Enabled() {
		if deschedulerPolicy, err = resolveDeschedulerPolicy(c.Descheduler); err != nil {
			return err
		}
	}
	if err := checkExplicitPort(c); err != nil {
		return err
	}
	if err := p.checkKubeconfigWritable(); err != nil {
		return err
	}

	d := clusterdir.For(p.Home, c.Name)
	if err := os.MkdirAll(clusterdir.ClustersPath(p.Home), 0o700); err != nil {
		return err
	}
	// Mkdir is atomic: of two creates of one name, exactly one gets here.
	if err := os.Mkdir(d.Path, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cluster %q already exists (delete it first, or choose another --name)", c.Name)
		}
		return err
	}
	defer func() {
		if err != nil && !opts.Retain {
			if rmErr := p.remove(d); rmErr != nil {
				err = fmt.Errorf("%w (cleaning up also failed: %v)", err, rmErr)
			}
		}
	}()
	p.logf("Creating cluster %q ...", c.Name)

	if err := writeClusterFiles(d, c, audit); err != nil {
		return err
	}
	if deschedulerPolicy != nil {
		if err := pki.WriteFile(d.DeschedulerPolicy(), deschedulerPolicy); err != nil {
			return err
		}
	}
	p.logf(" ✓ Certificates, keys and kubeconfigs written to %s", d.Path)
	if err := p.startAndWait(ctx, d, opts.Wait); err != nil {
		if !opts.Retain {
			err = fmt.Errorf("%w (run again with --retain to keep the cluster and its logs)", err)
		}
		return err
	}
	p.logf(" ✓ Control plane ready: %s", strings.Join(enabledComponents(c), ", "))
	if err := p.useContext(d); err != nil {
		return err
	}
	if opts.Nodes.Replicas > 0 {
		if c.DisableKubeletSim {
			opts.Nodes.Wait = 0 // nothing here will make them Ready
		}
		client, err := controlplane.AdminClient(d, 0)
		if err != nil {
			return err
		}
		if err := scale.Nodes(ctx, client, opts.Nodes); err != nil {
			return err
		}
		p.logf(" ✓ %d nodes Ready", opts.Nodes.Replicas)
	}
	p.logf("Cluster %q is ready (%.1fs). Try: kubectl get ns", c.Name, time.Since(started).Seconds())
	return nil
}

// writeClusterFiles lays out a new cluster's directory: its resolved
// config with fresh ports, audit policy, credentials and kubeconfigs.
func writeClusterFiles(d clusterdir.Dir, c *v1alpha1.Cluster, auditPolicy []byte) error {
	for _, dir := range []string{d.Logs(), d.Etcd()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	avoid := []int{c.Networking.APIServerPort}
	ports, err := controlplane.FreePorts(3, avoid)
	if err != nil {
		return err
	}
	if c.Networking.APIServerPort != 0 {
		ports[0] = c.Networking.APIServerPort
	}
	c.Status = &v1alpha1.ClusterStatus{
		KubernetesVersion: version.Get().GitVersion,
		KubesimVersion:    kubesimversion.Version,
		CreatedAt:         metav1.Now(),
		Ports:             v1alpha1.Ports{APIServer: ports[0], Etcd: ports[1], EtcdPeer: ports[2]},
	}
	if err := pki.WriteFile(d.AuditPolicy(), auditPolicy); err != nil {
		return err
	}
	if err := d.Save(c); err != nil {
		return err
	}
	if err := controlplane.WriteCredentials(d, c); err != nil {
		return fmt.Errorf("writing credentials: %w", err)
	}
	return controlplane.WriteKubeconfigs(d, c)
}

// readAuditPolicy reads and checks a user's audit policy, so a bad one is
// reported now rather than as an API server that never starts.
func readAuditPolicy(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auditPolicy: %w", err)
	}
	if _, err := policy.LoadPolicyFromBytes(data); err != nil {
		return nil, fmt.Errorf("auditPolicy: %s is not a valid audit.k8s.io/v1 Policy: %w", path, err)
	}
	return data, nil
}

// checkExplicitPort fails early if the port the user asked for is taken.
func checkExplicitPort(c *v1alpha1.Cluster) error {
	if p := c.Networking.APIServerPort; p != 0 && !controlplane.PortFree(p) {
		return fmt.Errorf("networking.apiServerPort: port %d is in use by another process; choose another or 0 for any", p)
	}
	return nil
}

// resolveDeschedulerPolicy reads the policy file, or expands the profiles,
// and checks the result with the descheduler's own validation.
func resolveDeschedulerPolicy(ds v1alpha1.Descheduler) ([]byte, error) {
	return descheduler.ResolvePolicy(ds.Policy, ds.Profiles,
		descheduler.PolicyFields{Policy: "descheduler.policy", Profiles: "descheduler.profiles"})
}

func enabledComponents(c *v1alpha1.Cluster) []string {
	var names []string
	for _, comp := range controlplane.Components() {
		if comp.Enabled(c) {
			names = append(names, comp.Name)
		}
	}
	return names
}

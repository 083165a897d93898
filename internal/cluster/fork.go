package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// Fork is a throwaway copy of a running cluster, for asking what would
// happen there without it happening: every object as it is now (an etcd
// snapshot, statuses included), on the cluster's own clock, in a home of
// its own under the system's temporary directory, so it is never listed,
// never in the user's kubeconfig and never mistaken for the cluster.
type Fork struct {
	p   *Provider
	dir clusterdir.Dir
	tmp string
}

// forkScale is the most a copy's clock runs faster than real time.
const forkScale = 2

// Fork copies the running cluster name and starts the copy. The copy runs
// what the cluster runs but for what acts on its own schedule and would
// change the state being asked about: the descheduler and Karpenter. It
// belongs to this process: it stops when the process exits, and Close
// deletes it.
func (p *Provider) Fork(ctx context.Context, name string, wait time.Duration) (_ *Fork, err error) {
	d, c, err := p.openRunning(name)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kubesim-fork-")
	if err != nil {
		return nil, err
	}
	f := &Fork{p: &Provider{Home: filepath.Join(tmp, "home"), Kubeconfig: filepath.Join(tmp, "kubeconfig"), Out: io.Discard}, tmp: tmp}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Close())
		}
	}()
	data := filepath.Join(tmp, "etcd.db")
	if err := saveEtcd(ctx, d, c, data); err != nil {
		return nil, fmt.Errorf("copying cluster %q: %w", name, err)
	}
	fc := c.DeepCopy()
	fc.Descheduler = v1alpha1.Descheduler{}
	fc.Autoscaler = v1alpha1.Autoscaler{}
	fc.Networking.APIServerPort = 0 // the cluster's own holds it
	if clock := c.Status.Clock; clock != nil && clock.Scale > forkScale {
		// The copy answers for this moment: it goes on from the cluster's
		// time, but at twice real time. At 60× its API server, starting on
		// restored data, gives up on its reads (it waits for its caches
		// three seconds of cluster time, 50 ms of real time) faster than
		// its caches fill.
		now := clusterclock.RealNow()
		fc.Status.Clock = &v1alpha1.Clock{Scale: forkScale, Epoch: clock.Now(now).UnixNano(), Anchor: now.UnixNano()}
	}
	f.dir = clusterdir.For(f.p.Home, fc.Name)
	if err := os.MkdirAll(f.dir.Path, 0o700); err != nil {
		return nil, err
	}
	// Fresh ports and credentials; the clock, stages and policies are the
	// cluster's, as resolved when it was made.
	if err := writeClusterFiles(f.dir, fc); err != nil {
		return nil, err
	}
	// The cluster's ports, which the copy's API server must not reach.
	var ports []string
	for _, port := range controlplane.UsedPorts(c) {
		ports = append(ports, strconv.Itoa(port))
	}
	if err := os.WriteFile(controlplane.CopiedPortsFile(f.dir), []byte(strings.Join(ports, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := stageEtcd(f.dir, fc, data); err != nil {
		return nil, fmt.Errorf("copying cluster %q: %w", name, err)
	}
	if err := swapEtcd(f.dir); err != nil {
		return nil, err
	}
	owner, err := supervisor.NewOwner(os.Getpid())
	if err != nil {
		return nil, err
	}
	if err := owner.Write(f.dir); err != nil {
		return nil, err
	}
	if err := f.p.recordKubeconfig(f.dir); err != nil {
		return nil, err
	}
	// Until the copy's components are set up, the webhooks and
	// APIServices it copied point at the cluster's ports, which its egress
	// proxy refuses (controlplane.CopiedPortsFile).
	if err := supervisor.Launch(ctx, f.p.Home, f.dir, wait); err != nil {
		return nil, fmt.Errorf("starting a copy of cluster %q: %w", name, err)
	}
	return f, nil
}

// RESTConfig is the copy's administrator's.
func (f *Fork) RESTConfig() (*rest.Config, error) { return credentials.AdminConfig(f.dir) }

// Close stops and deletes the copy.
func (f *Fork) Close() error {
	var err error
	if f.dir.Path != "" {
		err = f.p.remove(context.Background(), f.dir)
	}
	return errors.Join(err, os.RemoveAll(f.tmp))
}

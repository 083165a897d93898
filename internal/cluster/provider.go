// Package cluster creates, starts, stops and deletes kubesim clusters and
// keeps the user's kubeconfig in step with them. The CLI is a thin layer
// over it; it can be used on its own.
package cluster

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// Provider manages the clusters under one kubesim home.
type Provider struct {
	// Home is kubesim's home directory ($KUBESIM_HOME).
	Home string
	// Kubeconfig is the user's kubeconfig file that contexts are merged
	// into; empty means $KUBECONFIG's first file or ~/.kube/config.
	Kubeconfig string
	// Out receives progress lines.
	Out io.Writer
}

// NewProvider returns a provider for the default home, or $KUBESIM_HOME.
func NewProvider(kubeconfig string, out io.Writer) (*Provider, error) {
	home, err := clusterdir.Home()
	if err != nil {
		return nil, err
	}
	p := &Provider{Home: home, Kubeconfig: kubeconfig, Out: out}
	if warning := clusterdir.CheckHome(home); warning != "" {
		p.logf("Warning: %s", warning)
	}
	return p, nil
}

// dir returns the directory of the cluster called name, which may not
// exist.
func (p *Provider) dir(name string) (clusterdir.Dir, error) {
	if err := v1alpha1.ValidateName(name); err != nil {
		return clusterdir.Dir{}, err
	}
	return clusterdir.For(p.Home, name), nil
}

// open returns an existing cluster's directory and config.
func (p *Provider) open(name string) (clusterdir.Dir, *v1alpha1.Cluster, error) {
	if err := v1alpha1.ValidateName(name); err != nil {
		return clusterdir.Dir{}, nil, err
	}
	d, err := clusterdir.Open(p.Home, name)
	if err != nil {
		return d, nil, err
	}
	c, err := d.Load()
	return d, c, err
}

// openRunning is open, but fails with a hint if the cluster is stopped.
func (p *Provider) openRunning(name string) (clusterdir.Dir, *v1alpha1.Cluster, error) {
	d, c, err := p.open(name)
	if err != nil {
		return d, c, err
	}
	if !supervisor.Running(d) {
		return d, c, fmt.Errorf("cluster %q is stopped; start it with: kubesim start cluster --name %s", name, name)
	}
	return d, c, nil
}

// CheckRunning fails, saying why, unless the cluster exists and runs.
func (p *Provider) CheckRunning(name string) error {
	_, _, err := p.openRunning(name)
	return err
}

// KubeconfigPath returns the path of a running cluster's admin kubeconfig.
func (p *Provider) KubeconfigPath(name string) (string, error) {
	d, _, err := p.openRunning(name)
	return d.Kubeconfig(), err
}

// Info is what `get clusters` shows of a cluster.
type Info struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
	// Status is stopped, running, degraded (running, but the supervisor
	// knows something is wrong), or broken (a clone whose create ended
	// before it was whole, running or not); Cause says what is wrong.
	Status    string `json:"status"`
	Cause     string `json:"cause,omitempty"`
	APIServer string `json:"apiServer"`
	// Kubernetes is the release its control plane runs (v1.35.4).
	Kubernetes string    `json:"kubernetes"`
	Created    time.Time `json:"created"`
	// TimeScale is how fast the cluster's clock runs (1: real time), and
	// Time its time now.
	TimeScale int32     `json:"timeScale"`
	Time      time.Time `json:"time"`
}

// Clock is the cluster's scaled clock, nil for real time.
func (p *Provider) Clock(name string) (*v1alpha1.Clock, error) {
	_, c, err := p.open(name)
	if err != nil {
		return nil, err
	}
	return c.Status.Clock, nil
}

// List describes every cluster.
func (p *Provider) List() ([]Info, error) {
	names, err := clusterdir.List(p.Home)
	if err != nil {
		return nil, err
	}
	var infos []Info
	for _, name := range names {
		d, c, err := p.open(name)
		if err != nil {
			return nil, err
		}
		info := Info{
			Name:       name,
			Running:    supervisor.Running(d),
			Status:     StatusStopped,
			APIServer:  credentials.APIServerURL(c),
			Kubernetes: c.Status.KubernetesVersion,
			Created:    c.Status.CreatedAt.Time,
			TimeScale:  1,
			Time:       time.Now(),
		}
		if clock := c.Status.Clock; clock != nil {
			info.TimeScale, info.Time = clock.Scale, clock.Now(time.Now())
		}
		if info.Running {
			info.Status, info.Cause = runningStatus(d)
		} else if supervisor.Died(d) {
			info.Cause = fmt.Sprintf("its supervisor died, and its components with it; kubesim start cluster --name %s starts it again", name)
		}
		if cloneInterrupted(d) {
			info.Status, info.Cause = StatusBroken, interruptedCause
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// The statuses of a cluster.
const (
	StatusStopped  = "stopped"
	StatusRunning  = supervisor.StateRunning
	StatusDegraded = supervisor.StateDegraded
)

// runningStatus is the status of a running cluster as its supervisor
// records it, and the cause if it is degraded.
func runningStatus(d clusterdir.Dir) (status, cause string) {
	h, err := supervisor.ReadHealth(d)
	switch {
	case err != nil:
		return StatusDegraded, "cannot read the supervisor's record: " + err.Error()
	case h.State == StatusDegraded:
		return StatusDegraded, h.Cause
	}
	return StatusRunning, ""
}

func (p *Provider) logf(format string, args ...any) {
	if p.Out != nil {
		fmt.Fprintf(p.Out, format+"\n", args...)
	}
}

// AdminKubeconfig returns a cluster's admin kubeconfig, whether or not the
// cluster is running.
func (p *Provider) AdminKubeconfig(name string) (*clientcmdapi.Config, error) {
	d, c, err := p.open(name)
	if err != nil {
		return nil, err
	}
	return credentials.AdminKubeconfig(d, c)
}

// LogPath returns the log file of a cluster's component, "supervisor" or
// "audit".
func (p *Provider) LogPath(name, component string) (string, error) {
	d, _, err := p.open(name)
	if err != nil {
		return "", err
	}
	valid := supervisor.LogNames()
	if !slices.Contains(valid, component) {
		return "", fmt.Errorf("no log named %q; choose one of: %s", component, strings.Join(valid, ", "))
	}
	path := d.Log(component)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s has not written a log yet (%s)", component, path)
	}
	return path, nil
}

// RESTConfig is the admin's client configuration of a running cluster.
func (p *Provider) RESTConfig(name string) (*rest.Config, error) {
	d, _, err := p.openRunning(name)
	if err != nil {
		return nil, err
	}
	return credentials.AdminConfig(d)
}

// Client returns a client of a running cluster, as its admin.
func (p *Provider) Client(name string) (kubernetes.Interface, error) {
	d, _, err := p.openRunning(name)
	if err != nil {
		return nil, err
	}
	return credentials.AdminClient(d, 0)
}

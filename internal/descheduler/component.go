package descheduler

import (
	"context"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/deploy"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/pki"
)

// ComponentName is the descheduler's process in a kubesim cluster, which
// runs when the cluster's config names descheduler profiles.
const ComponentName = "descheduler"

var identity = component.Identity{File: ComponentName, User: "kubesim:descheduler"}

// Component is the descheduler as a process of a kubesim cluster.
func Component() component.Component {
	return component.Component{
		Name: ComponentName,
		Main: component.Main(ComponentName, DefaultComponentOptions, deschedule),
		Args: component.OwnArgs(componentOptions),
		// `create cluster`'s flags of the options it reads.
		Flags: []component.Flag{
			{Name: "descheduler-policy", Usage: "run the descheduler as a component with this descheduler/v1alpha2 policy",
				Lands: component.At((*pflag.FlagSet).StringVar, func(s *v1alpha1.ClusterSpec) *string { return &s.Descheduler.Policy })},
			{Name: "descheduler-profile", Usage: "run the descheduler as a component with these named profiles",
				Lands: component.At((*pflag.FlagSet).StringSliceVar, func(s *v1alpha1.ClusterSpec) *[]string { return &s.Descheduler.Profiles })},
			{Name: "descheduling-interval", Usage: "time between the descheduler's cycles (default 1m)",
				Lands: component.DurationAt(func(s *v1alpha1.ClusterSpec) **metav1.Duration { return &s.Descheduler.Interval })},
		},
		Enabled:      func(c *v1alpha1.Cluster) bool { return c.Descheduler.Enabled() },
		Prepare:      writePolicy,
		MemoryWeight: 5,
		Identity:     &identity,
		Grants:       []component.Grant{{Role: deploy.DeschedulerClusterRole}},
	}
}

// ComponentOptions is the command line of the descheduler component.
type ComponentOptions struct {
	Kubeconfig string
	Policy     string // a descheduler/v1alpha2 DeschedulerPolicy file
	Interval   time.Duration
}

// DefaultComponentOptions are the descheduler component's defaults.
func DefaultComponentOptions() ComponentOptions {
	return ComponentOptions{Interval: time.Minute}
}

func (o *ComponentOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the cluster")
	fs.StringVar(&o.Policy, "policy", o.Policy, "descheduler/v1alpha2 DeschedulerPolicy file")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "time between descheduling cycles")
}

func componentOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *ComponentOptions {
	return &ComponentOptions{
		Kubeconfig: d.ComponentKubeconfig(identity.File),
		Policy:     d.DeschedulerPolicy(),
		Interval:   c.Descheduler.Interval.Duration,
	}
}

// writePolicy writes the policy create resolved into the cluster's status.
func writePolicy(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return pki.WriteFile(d.DeschedulerPolicy(), []byte(c.Status.DeschedulerPolicy))
}

// deschedule runs descheduling cycles every interval with the policy
// until SIGTERM or SIGINT, logging each eviction and refusal.
func deschedule(ctx context.Context, opts ComponentOptions) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	policy, err := os.ReadFile(opts.Policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	klog.InfoS("descheduler started", "interval", opts.Interval)
	_, err = Run(ctx, Options{
		Config:   cfg,
		Policy:   policy,
		Interval: opts.Interval,
		OnEviction: func(e Eviction) {
			klog.InfoS("eviction", "result", e.Result, "pod", e.Namespace+"/"+e.Pod, "node", e.Node,
				"plugin", e.Plugin, "reason", e.Reason, "message", e.Message)
		},
	})
	return err
}

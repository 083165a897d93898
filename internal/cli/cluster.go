package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
)

const defaultWait = 3 * time.Minute

// newClusterVerbCommands are create, delete, start and stop, each holding
// its `cluster` subcommand (as kind's verbs do).
func newClusterVerbCommands() []*cobra.Command {
	return []*cobra.Command{
		group("create", "Create a cluster", newCreateClusterCommand()),
		group("delete", "Delete clusters", newDeleteClusterCommand()),
		group("start", "Start a stopped cluster", newStartClusterCommand()),
		group("stop", "Stop a running cluster, keeping its data", newStopClusterCommand()),
	}
}

// createClusterFlags mirror the Cluster config; a flag set on the command
// line overrides the config file.
type createClusterFlags struct {
	clusterFlags
	config                    string
	apiServerPort             int
	podSubnet                 string
	serviceSubnet             string
	auditPolicy               string
	nodeMonitorPeriod         time.Duration
	nodeMonitorGracePeriod    time.Duration
	nodeStartupGracePeriod    time.Duration
	podEvictionToleration     time.Duration
	stages                    string
	deschedulerPolicy         string
	deschedulerProfiles       []string
	deschedulingInterval      time.Duration
	nodes                     int
	disableKubeletSim         bool
	disableDPDBController     bool
	disableUsageMetrics       bool
	hpaSyncPeriod             time.Duration
	hpaDownscaleStabilization time.Duration
	percentageOfNodes         int32
	timeScale                 int32
	memoryLimit               string
	nodeFlags                 nodeFlags
	wait                      time.Duration
	retain                    bool
	ownerPID                  int
	from                      string
	fromContext               string
}

func newCreateClusterCommand() *cobra.Command {
	f := &createClusterFlags{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Create a simulated cluster and wait until it is ready",
		Args:  cobra.NoArgs,
		// Not f.run: --name names the new cluster, the current context's
		// cluster being no default for it.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("name") {
				if err := v1alpha1.ValidateName(f.name); err != nil {
					return err
				}
			}
			p, err := cluster.NewProvider(f.kubeconfig, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			c, err := f.clusterConfig(cmd)
			if err != nil {
				return err
			}
			f.nodeFlags.template = c.NodeTemplate // the flag's, or the config's
			nodes, err := f.nodeFlags.options(cmd.ErrOrStderr(), c.Nodes, f.wait)
			if err != nil {
				return err
			}
			return p.Create(cmd.Context(), c, cluster.CreateOptions{Wait: f.wait, Retain: f.retain, Nodes: nodes, OwnerPID: f.ownerPID})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", v1alpha1.DefaultClusterName, "the new cluster's name")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig to write the cluster's context to (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.config, "config", "", "a kubesim.io/v1alpha1 Cluster file; flags override it")
	fl.IntVar(&f.apiServerPort, "api-server-port", 0, "loopback port of the API server (0: any free port)")
	fl.StringVar(&f.podSubnet, "pod-subnet", "", "pod range, a CIDR per node holding at least 1,000 pods and the nodes' pods capacity (default "+v1alpha1.DefaultPodSubnet+": 16,384 nodes of /22)")
	fl.StringVar(&f.serviceSubnet, "service-subnet", "", "Service ClusterIP range (default "+v1alpha1.DefaultServiceSubnet+")")
	fl.StringVar(&f.auditPolicy, "audit-policy", "", "audit.k8s.io/v1 Policy file (default: metadata of writes)")
	fl.DurationVar(&f.nodeMonitorPeriod, "node-monitor-period", 0, "how often node-lifecycle checks nodes (default 5s)")
	fl.DurationVar(&f.nodeMonitorGracePeriod, "node-monitor-grace-period", 0, "how long a silent node stays Ready (default 50s)")
	fl.DurationVar(&f.nodeStartupGracePeriod, "node-startup-grace-period", 0, "how long a new node may take to be Ready (default 60s)")
	fl.DurationVar(&f.podEvictionToleration, "pod-eviction-toleration", 0, "how long pods stay on a NotReady or unreachable node before eviction (default 300s)")
	fl.StringVar(&f.stages, "stages", "", "built-in stage set: "+strings.Join(v1alpha1.StageSets, " or ")+" (default "+v1alpha1.StageSets[0]+")")
	fl.StringVar(&f.deschedulerPolicy, "descheduler-policy", "", "run the descheduler as a component with this descheduler/v1alpha2 policy")
	fl.StringSliceVar(&f.deschedulerProfiles, "descheduler-profile", nil, "run the descheduler as a component with these named profiles")
	fl.DurationVar(&f.deschedulingInterval, "descheduling-interval", 0, "time between the descheduler's cycles (default 1m)")
	fl.IntVar(&f.nodes, "nodes", 0, "simulated nodes to create (node-000000, …)")
	f.nodeFlags.add(cmd)
	fl.Int32Var(&f.percentageOfNodes, "percentage-of-nodes-to-score", 0, "share of feasible nodes the scheduler scores (default: upstream's adaptive share)")
	fl.StringVar(&f.memoryLimit, "memory-limit", "", "memory budget of the control plane's processes together, such as 4Gi; 0 for none (default "+v1alpha1.DefaultMemoryLimit.String()+")")
	fl.BoolVar(&f.disableKubeletSim, "disable-kubelet-sim", false, "run no kubelet simulator (nodes stay NotReady unless simulated from elsewhere)")
	fl.BoolVar(&f.disableDPDBController, "disable-dpdb-controller", false, "run no DistributedPodDisruptionBudget controller (the CRD is installed; run one from deploy/dpdb)")
	fl.BoolVar(&f.disableUsageMetrics, "disable-usage-metrics", false, "serve no metrics.k8s.io from declared usage (kubectl top and CPU/memory HPAs then have no metrics)")
	fl.DurationVar(&f.hpaSyncPeriod, "horizontal-pod-autoscaler-sync-period", 0, "how often the HPA controller evaluates each HPA (default 15s)")
	fl.DurationVar(&f.hpaDownscaleStabilization, "horizontal-pod-autoscaler-downscale-stabilization", 0, "how far back the HPA controller looks before it scales in (default 5m)")
	fl.Int32Var(&f.timeScale, "time-scale", 0, "seconds of cluster time per real second: every component runs on one clock this much faster than real time, upstream's timings unchanged (default 1)")
	fl.DurationVar(&f.wait, "wait", defaultWait, "how long to wait for the cluster (and its nodes) to be ready")
	fl.BoolVar(&f.retain, "retain", false, "keep a cluster that failed to start, for its logs")
	fl.StringVar(&f.from, "from", "", "make the cluster a clone of this snapshot file (kubesim snapshot export)")
	fl.StringVar(&f.fromContext, "from-context", "", "make the cluster a clone of this kubeconfig context's cluster, read now (get and list only)")
	fl.IntVar(&f.ownerPID, "owner-pid", 0, "stop the cluster when this process exits, e.g. $$ in a CI job (a later start clears it)")
	return cmd
}

// loadConfigFlag reads the Cluster file given by --config; without one, the
// config is empty (all defaults).
func loadConfigFlag(path string) (*v1alpha1.Cluster, error) {
	if path == "" {
		return &v1alpha1.Cluster{}, nil
	}
	c, err := cluster.LoadConfig(path)
	var unreadable *fs.PathError
	switch {
	case errors.As(err, &unreadable): // it names the file already
		return nil, fmt.Errorf("--config: %w", err)
	case err != nil:
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	return c, nil
}

// clusterConfig reads --config, if given, and lays the set flags over it.
func (f *createClusterFlags) clusterConfig(cmd *cobra.Command) (*v1alpha1.Cluster, error) {
	c, err := loadConfigFlag(f.config)
	if err != nil {
		return nil, err
	}
	changed := cmd.Flags().Changed
	if changed("name") || c.Name == "" {
		c.Name = f.name
	}
	if changed("api-server-port") {
		c.Networking.APIServerPort = f.apiServerPort
	}
	if changed("pod-subnet") {
		c.Networking.PodSubnet = f.podSubnet
	}
	if changed("service-subnet") {
		c.Networking.ServiceSubnet = f.serviceSubnet
	}
	if changed("nodes") {
		c.Nodes = f.nodes
	}
	if changed("percentage-of-nodes-to-score") {
		c.Scheduler.PercentageOfNodesToScore = &f.percentageOfNodes
	}
	if changed("descheduler-policy") {
		c.Descheduler.Policy = f.deschedulerPolicy
	}
	if changed("descheduler-profile") {
		c.Descheduler.Profiles = f.deschedulerProfiles
	}
	if changed("descheduling-interval") {
		c.Descheduler.Interval = &metav1.Duration{Duration: f.deschedulingInterval}
	}
	if changed("time-scale") {
		c.TimeScale = f.timeScale
	}
	if changed("stages") {
		c.Stages = f.stages
	}
	if changed("disable-dpdb-controller") {
		c.DisableDPDBController = f.disableDPDBController
	}
	if changed("disable-usage-metrics") {
		c.Usage.Disabled = f.disableUsageMetrics
	}
	if changed("disable-kubelet-sim") {
		c.DisableKubeletSim = f.disableKubeletSim
	}
	if changed("node-template") {
		c.NodeTemplate = f.nodeFlags.template
	}
	if changed("from") {
		c.From = f.from
	}
	if changed("from-context") {
		c.FromContext = f.fromContext
	}
	if changed("audit-policy") {
		c.AuditPolicy = f.auditPolicy
	}
	if changed("memory-limit") {
		limit, err := resource.ParseQuantity(f.memoryLimit)
		if err != nil {
			return nil, fmt.Errorf("--memory-limit: %q is not a size such as 2Gi (or 0 for no limit)", f.memoryLimit)
		}
		c.MemoryLimit = &limit
	}
	for flag, dst := range map[string]struct {
		value time.Duration
		field **metav1.Duration
	}{
		"node-monitor-period":                               {f.nodeMonitorPeriod, &c.NodeLifecycle.NodeMonitorPeriod},
		"node-monitor-grace-period":                         {f.nodeMonitorGracePeriod, &c.NodeLifecycle.NodeMonitorGracePeriod},
		"node-startup-grace-period":                         {f.nodeStartupGracePeriod, &c.NodeLifecycle.NodeStartupGracePeriod},
		"pod-eviction-toleration":                           {f.podEvictionToleration, &c.NodeLifecycle.PodEvictionToleration},
		"horizontal-pod-autoscaler-sync-period":             {f.hpaSyncPeriod, &c.HorizontalPodAutoscaler.SyncPeriod},
		"horizontal-pod-autoscaler-downscale-stabilization": {f.hpaDownscaleStabilization, &c.HorizontalPodAutoscaler.DownscaleStabilization},
	} {
		if changed(flag) {
			*dst.field = &metav1.Duration{Duration: dst.value}
		}
	}
	return c, nil
}

func newDeleteClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	var all bool
	deleteOne := f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
		return p.Delete(cmd.Context(), f.name)
	})
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Stop a cluster, remove its files and its kubeconfig context",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all {
				return deleteOne(cmd, args)
			}
			if cmd.Flags().Changed("name") {
				return errors.New("--all and --name: give one or the other")
			}
			p, err := cluster.NewProvider(f.kubeconfig, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return p.DeleteAll(cmd.Context())
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "delete every cluster")
	return cmd
}

func newStartClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a stopped cluster with its data, and wait until it is ready",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			return p.Start(cmd.Context(), f.name, wait)
		}),
	}
	f.add(cmd)
	cmd.Flags().DurationVar(&wait, "wait", defaultWait, "how long to wait for the cluster to be ready")
	return cmd
}

func newStopClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Stop a cluster's processes; its objects stay for the next start",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			return p.Stop(cmd.Context(), f.name)
		}),
	}
	f.add(cmd)
	return cmd
}

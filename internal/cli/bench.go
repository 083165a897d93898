package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/bench"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/version"
)

func newBenchCommand() *cobra.Command {
	cmd := group("bench", "Measure kubesim on this machine",
		newBenchCreateCommand(),
		newBenchCloneCommand(),
		newBenchDPDBCommand(),
		newBenchTakeoverCommand(),
		newBenchUsageCommand(),
		newBenchAutoscaleCommand(), newBenchKueueCommand(),
		newBenchScenarioCommand("nodes", "Time N simulated nodes created until Ready and schedulable", bench.NodesScenario),
		newBenchScenarioCommand("pods", "Time N pods bound to one node until Running, then deleted until gone", bench.PodsScenario),
		newBenchScenarioCommand("deployment", "Time a Deployment of N pods scheduled onto M nodes until Running", bench.DeploymentScenario),
		newBenchScenarioCommand("floor", "Time the control plane alone (no simulator) creating N pods, deleting them, and creating M nodes", bench.FloorScenario),
		newBenchScenarioCommand("scale", "Run N pods bound across M nodes, hold them Running, then delete them; report peak memory", bench.ScaleScenario),
	)
	// Results depend on the build: say which patches it applied, and its
	// Go runtime's clock.
	cmd.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		fmt.Fprintln(cmd.OutOrStdout(), version.PatchesLine())
		fmt.Fprintln(cmd.OutOrStdout(), version.ClockLine())
	}
	return cmd
}

type benchFlags struct {
	nodes, pods int
	keep, floor bool
	config      string
	hold        time.Duration
}

// newBenchScenarioCommand runs a scenario in a throwaway cluster and
// prints its phases.
func newBenchScenarioCommand(use, short string, scenario bench.Scenario) *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.nodes < 1 || f.pods < 1 {
				return fmt.Errorf("--nodes and --pods: must be at least 1")
			}
			cfg, err := loadConfigFlag(f.config)
			if err != nil {
				return err
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			return scenario.Run(cmd.Context(), bench.RunOptions{
				Home: home, Config: cfg, Keep: f.keep, Floor: f.floor, Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr(),
				Size: bench.Size{Nodes: f.nodes, Pods: f.pods, Hold: f.hold},
			})
		},
	}
	cmd.Flags().IntVar(&f.nodes, "nodes", scenario.Default.Nodes, "simulated nodes")
	cmd.Flags().IntVar(&f.pods, "pods", scenario.Default.Pods, "pods")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep the cluster afterwards, to look into it")
	cmd.Flags().DurationVar(&f.hold, "hold", scenario.Default.Hold, "nodes, scale: then watch them this long, failing if a node stops being Ready (or a pod Running)")
	cmd.Flags().StringVar(&f.config, "config", "", "a kubesim.io/v1alpha1 Cluster file for the throwaway cluster (its name is replaced)")
	if scenario.FloorSize != nil {
		cmd.Flags().BoolVar(&f.floor, "floor", true, "first time the control plane alone (no simulator) making the same nodes and pods, in fresh clusters of its own, and print each phase's ratio to it")
	}
	return cmd
}

func newBenchCreateCommand() *cobra.Command {
	var runs int
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Time create-to-ready, stop, start-to-ready and delete of a throwaway cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs < 1 {
				return fmt.Errorf("--runs: must be at least 1, got %d", runs)
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			return bench.Lifecycle(cmd.Context(), home, runs, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 3, "how many times to run the lifecycle")
	return cmd
}

func newBenchCloneCommand() *cobra.Command {
	var nodes, pods int
	cmd := &cobra.Command{
		Use:   "clone",
		Short: "Make a source cluster of N nodes and M pods, export it (the source's CPU meanwhile), clone it, and set the clone's time against the control plane alone creating the same nodes and pods",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if nodes < 1 || pods < 1 {
				return fmt.Errorf("--nodes and --pods: must be at least 1")
			}
			if pods > nodes*bench.PodsPerNode {
				return fmt.Errorf("--pods: %d is more than %d nodes hold (%d each); give at most %d, or more --nodes", pods, nodes, bench.PodsPerNode, nodes*bench.PodsPerNode)
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			return bench.Clone(cmd.Context(), bench.CloneOptions{Home: home, Size: bench.Size{Nodes: nodes, Pods: pods}, Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().IntVar(&nodes, "nodes", 1000, "nodes of the source")
	cmd.Flags().IntVar(&pods, "pods", 20000, "pods of the source, bound across its nodes, in ReplicaSets of 100")
	return cmd
}

func newBenchDPDBCommand() *cobra.Command {
	var pairs int
	cmd := &cobra.Command{
		Use:   "dpdb",
		Short: "Count simultaneous neighbour evictions in two federated clusters that both pass, without and with the eviction webhook; time the lock and the propagation lag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			return bench.DPDB(cmd.Context(), home, pairs, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&pairs, "pairs", 50, "pairs of neighbouring pods, one in each cluster")
	return cmd
}

func newBenchTakeoverCommand() *cobra.Command {
	o := bench.TakeoverOptions{}
	var config string
	cmd := &cobra.Command{
		Use:   "takeover",
		Short: "Share N nodes among kubelet-sim processes, kill -9 one, and time the others taking its nodes over; report the balance and the nodes that went NotReady",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Nodes < 1 {
				return fmt.Errorf("--nodes: must be at least 1, got %d", o.Nodes)
			}
			if o.Simulators < 2 {
				return fmt.Errorf("--simulators: must be at least 2 (one is killed), got %d", o.Simulators)
			}
			var err error
			if o.Config, err = loadConfigFlag(config); err != nil {
				return err
			}
			if o.Home, err = clusterdir.Home(); err != nil {
				return err
			}
			o.Out, o.Log = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return bench.Takeover(cmd.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.Nodes, "nodes", 2000, "simulated nodes")
	cmd.Flags().IntVar(&o.Simulators, "simulators", 2, "kubelet-sim processes sharing them")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the cluster afterwards, to look into it (the simulators' logs are in its logs/)")
	cmd.Flags().StringVar(&config, "config", "", "a kubesim.io/v1alpha1 Cluster file for the throwaway cluster (its name is replaced; nodeLifecycle.nodeMonitorGracePeriod sets the grace)")
	return cmd
}

func newBenchUsageCommand() *cobra.Command {
	o := bench.UsageOptions{}
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Measure serving metrics: kubectl top pods -A's latency and the cluster's CPU with HPAs reading a usage expression over every pod, then the same without usage-metrics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkUsageFlags(&o); err != nil {
				return err
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			o.Home, o.Out, o.Log = home, cmd.OutOrStdout(), cmd.ErrOrStderr()
			return bench.Usage(cmd.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.Size.Nodes, "nodes", 1000, "simulated nodes")
	cmd.Flags().IntVar(&o.Size.Pods, "pods", 10000, "pods, bound across the nodes, in ReplicaSets of 100")
	cmd.Flags().IntVar(&o.HPAs, "hpas", 50, "HorizontalPodAutoscalers, one per ReplicaSet, reading its pods' CPU every 15s")
	cmd.Flags().DurationVar(&o.Window, "window", time.Minute, "how long the CPU is measured, in each cluster")
	cmd.Flags().IntVar(&o.TopRuns, "top-runs", 5, "how many times kubectl top pods -A is timed (the median is shown)")
	return cmd
}

// checkUsageFlags says which flag is out of range and what would do.
func checkUsageFlags(o *bench.UsageOptions) error {
	sets := (o.Size.Pods + 99) / 100
	switch {
	case o.Size.Nodes < 1 || o.Size.Pods < 1:
		return fmt.Errorf("--nodes and --pods: must be at least 1")
	case o.Size.Pods > o.Size.Nodes*bench.PodsPerNode:
		return fmt.Errorf("--pods: %d is more than %d nodes hold (%d each); give at most %d, or more --nodes", o.Size.Pods, o.Size.Nodes, bench.PodsPerNode, o.Size.Nodes*bench.PodsPerNode)
	case o.HPAs < 1 || o.HPAs > sets:
		return fmt.Errorf("--hpas: %d; give 1 to %d, one per ReplicaSet of 100 pods (or more --pods)", o.HPAs, sets)
	case o.Window < time.Second:
		return fmt.Errorf("--window: %s; give 1s or more (a sync period, 15s, or several)", o.Window)
	case o.TopRuns < 1:
		return fmt.Errorf("--top-runs: %d; give 1 or more", o.TopRuns)
	}
	return nil
}

func newBenchAutoscaleCommand() *cobra.Command {
	o := bench.AutoscaleOptions{}
	cmd := &cobra.Command{
		Use:   "autoscale",
		Short: "Send Karpenter a burst of Pending pods onto an empty NodePool until all run, scale down and time consolidation; beside the same pods on nodes made beforehand",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkAutoscaleFlags(o); err != nil {
				return err
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			o.Home, o.Out, o.Log = home, cmd.OutOrStdout(), cmd.ErrOrStderr()
			return bench.Autoscale(cmd.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.Pods, "pods", 1000, "Pending pods of 700m CPU, five to a node of the NodePool's one type")
	cmd.Flags().IntVar(&o.MaxNodes, "max-nodes", 200, "the NodePool's limit on nodes")
	cmd.Flags().IntVar(&o.ScaleTo, "scale-to", 100, "the pods kept when scaling down, for consolidation")
	cmd.Flags().Int32Var(&o.TimeScale, "time-scale", 1, "the Karpenter cluster's clock, times real time")
	return cmd
}

func checkAutoscaleFlags(o bench.AutoscaleOptions) error {
	switch {
	case o.Pods < 1:
		return fmt.Errorf("--pods: %d; give 1 or more", o.Pods)
	case o.MaxNodes < 1 || o.MaxNodes*bench.AutoscalePodsPerNode < o.Pods:
		return fmt.Errorf("--max-nodes: %d nodes hold %d pods (%d each), fewer than --pods %d; give at least %d", o.MaxNodes, o.MaxNodes*bench.AutoscalePodsPerNode, bench.AutoscalePodsPerNode, o.Pods, (o.Pods+bench.AutoscalePodsPerNode-1)/bench.AutoscalePodsPerNode)
	case o.ScaleTo < 0 || o.ScaleTo >= o.Pods:
		return fmt.Errorf("--scale-to: %d; give 0 to %d, fewer than --pods", o.ScaleTo, o.Pods-1)
	}
	return v1alpha1.CheckTimeScale(o.TimeScale)
}

func newBenchKueueCommand() *cobra.Command {
	o := bench.KueueOptions{}
	cmd := &cobra.Command{
		Use:   "kueue",
		Short: "Watch the kueue add-on at rest, then send Jobs through one ClusterQueue until all complete: Kueue's CPU and RSS",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case o.Jobs < 1:
				return fmt.Errorf("--jobs: %d; give 1 or more", o.Jobs)
			case o.Quota < 1:
				return fmt.Errorf("--quota: %d; give 1 or more CPUs", o.Quota)
			case o.RunFor < time.Second:
				return fmt.Errorf("--run-for: %s; give 1s or more", o.RunFor)
			case o.Idle < time.Second:
				return fmt.Errorf("--idle: %s; give 1s or more", o.Idle)
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			o.Home, o.Out, o.Log = home, cmd.OutOrStdout(), cmd.ErrOrStderr()
			return bench.Kueue(cmd.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.Jobs, "jobs", 1000, "Jobs of one pod of 1 CPU")
	cmd.Flags().IntVar(&o.Quota, "quota", 100, "the ClusterQueue's CPUs: how many Jobs run at once")
	cmd.Flags().DurationVar(&o.RunFor, "run-for", 10*time.Second, "each Job's run time (kubesim.io/run-duration)")
	cmd.Flags().DurationVar(&o.Idle, "idle", time.Minute, "how long Kueue is watched at rest first")
	return cmd
}

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/bench"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure kubesim on this machine"}
	cmd.AddCommand(newBenchCreateCommand(),
		newBenchScenarioCommand("nodes", "Time N simulated nodes created until Ready and schedulable",
			func(f *benchFlags) benchFunc {
				return func(ctx context.Context, c *bench.Cluster) ([]bench.Phase, error) {
					phases, err := bench.Nodes(ctx, c, f.nodes)
					if err != nil || f.hold <= 0 {
						return phases, err
					}
					held, err := bench.HoldNodes(ctx, c, f.nodes, f.hold)
					return append(phases, held), err
				}
			}),
		newBenchScenarioCommand("pods", "Time N pods bound to one node until Running, then deleted until gone",
			func(f *benchFlags) benchFunc {
				return func(ctx context.Context, c *bench.Cluster) ([]bench.Phase, error) {
					return bench.PodsOnOneNode(ctx, c, f.pods)
				}
			}),
		newBenchScenarioCommand("deployment", "Time a Deployment of N pods scheduled onto M nodes until Running",
			func(f *benchFlags) benchFunc {
				return func(ctx context.Context, c *bench.Cluster) ([]bench.Phase, error) {
					return bench.Deployment(ctx, c, f.nodes, f.pods)
				}
			}),
		newBenchScenarioCommand("floor", "Time the control plane alone (no simulator) creating N pods, deleting them, and creating M nodes",
			func(f *benchFlags) benchFunc {
				return func(ctx context.Context, c *bench.Cluster) ([]bench.Phase, error) {
					return bench.Floor(ctx, c, f.nodes, f.pods)
				}
			}, withoutKubeletSim),
	)
	return cmd
}

type benchFunc func(ctx context.Context, c *bench.Cluster) ([]bench.Phase, error)

type benchFlags struct {
	nodes, pods int
	keep        bool
	config      string
	hold        time.Duration
}

// newBenchScenarioCommand runs a scenario in a throwaway cluster and
// prints its phases.
func newBenchScenarioCommand(use, short string, scenario func(*benchFlags) benchFunc, configure ...func(*v1alpha1.Cluster)) *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.nodes < 1 || f.pods < 1 {
				return fmt.Errorf("--nodes and --pods: must be at least 1")
			}
			home, err := clusterdir.Home()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			name := fmt.Sprintf("bench-%d", os.Getpid())
			cfg, err := loadConfigFlag(f.config)
			if err != nil {
				return err
			}
			cfg.Name = name
			for _, conf := range configure {
				conf(cfg)
			}
			c, err := bench.NewCluster(ctx, home, cfg, io.Discard)
			if err != nil {
				return err
			}
			if f.keep {
				fmt.Fprintf(cmd.ErrOrStderr(), "Keeping cluster %q (kubesim delete cluster --name %s)\n", name, name)
			} else {
				defer c.Delete(context.Background())
			}
			phases, err := scenario(f)(ctx, c)
			bench.Report(cmd.OutOrStdout(), phases)
			return err
		},
	}
	cmd.Flags().IntVar(&f.nodes, "nodes", 1000, "simulated nodes")
	cmd.Flags().IntVar(&f.pods, "pods", 10000, "pods")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep the cluster afterwards, to look into it")
	cmd.Flags().DurationVar(&f.hold, "hold", 0, "nodes: then watch them this long, failing if one stops being Ready")
	cmd.Flags().StringVar(&f.config, "config", "", "a kubesim.io/v1alpha1 Cluster file for the throwaway cluster (its name is replaced)")
	return cmd
}

// withoutKubeletSim leaves the simulator out of a benchmark's cluster.
func withoutKubeletSim(c *v1alpha1.Cluster) { c.DisableKubeletSim = true }

// lifecycleSteps are the steps `bench create` times, in order.
var lifecycleSteps = []string{"create", "stop", "start", "delete"}

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
			tmp, err := os.MkdirTemp("", "kubesim-bench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			// A throwaway kubeconfig: benchmarking must not touch the user's.
			p := &cluster.Provider{Home: home, Kubeconfig: filepath.Join(tmp, "kubeconfig"), Out: io.Discard}
			times := map[string][]time.Duration{}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%-8s%10s%10s%10s%10s\n", "RUN", "CREATE", "STOP", "START", "DELETE")
			for run := 1; run <= runs; run++ {
				row, err := benchLifecycle(cmd, p, fmt.Sprintf("bench-%d-%d", os.Getpid(), run))
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%-8d", run)
				for i, step := range lifecycleSteps {
					times[step] = append(times[step], row[i])
					fmt.Fprintf(out, "%9.2fs", row[i].Seconds())
				}
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "%-8s", "median")
			for _, step := range lifecycleSteps {
				fmt.Fprintf(out, "%9.2fs", median(times[step]).Seconds())
			}
			fmt.Fprintln(out)
			return nil
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 3, "how many times to run the lifecycle")
	return cmd
}

// benchLifecycle creates, stops, starts and deletes one cluster and
// returns how long each step took.
func benchLifecycle(cmd *cobra.Command, p *cluster.Provider, name string) ([]time.Duration, error) {
	ctx := cmd.Context()
	steps := []func() error{
		func() error {
			return p.Create(ctx, &v1alpha1.Cluster{Name: name}, cluster.CreateOptions{Wait: defaultWait})
		},
		func() error { return p.Stop(ctx, name) },
		func() error { return p.Start(ctx, name, defaultWait) },
		func() error { return p.Delete(ctx, name) },
	}
	var took []time.Duration
	for i, step := range steps {
		start := time.Now()
		if err := step(); err != nil {
			_ = p.Delete(ctx, name)
			return nil, fmt.Errorf("%s: %w", lifecycleSteps[i], err)
		}
		took = append(took, time.Since(start))
	}
	return took, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

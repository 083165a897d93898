package bench

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// RunOptions say where and how big to run a scenario.
type RunOptions struct {
	Home   string            // kubesim's home, where the cluster lives
	Config *v1alpha1.Cluster // the cluster's shape (nil: defaults); its name is replaced
	Size   Size
	Keep   bool // keep the cluster afterwards, to look into it
	// Floor first measures the floor the scenario's phases are set
	// against, each part in a fresh cluster, deleted before the scenario's.
	Floor bool
	Out   io.Writer // the phases measured
	Log   io.Writer // the note that the cluster is kept
}

// Run creates a throwaway cluster, runs the scenario in it, prints the
// phases it measured (those before a failure too) and deletes the cluster
// unless o.Keep. With o.Floor, the floor of those phases is measured
// first, each part (nodes, pods) in a throwaway cluster of its own, and
// printed; each phase then says how many times its floor it took.
func (s Scenario) Run(ctx context.Context, o RunOptions) error {
	var floor []Phase
	if o.Floor && s.FloorSize != nil {
		// Each part in a fresh cluster: nodes created after 10,000 pods
		// came and went took up to twice as long as in a new one.
		want := s.FloorSize(o.Size)
		for _, part := range []Size{{Nodes: want.Nodes}, {Pods: want.Pods}} {
			if part == (Size{}) {
				continue
			}
			phases, err := FloorScenario.measure(ctx, o, "-floor", part, false)
			Report(o.Out, phases, nil)
			if err != nil {
				return err
			}
			floor = append(floor, phases...)
		}
	}
	phases, err := s.measure(ctx, o, "", o.Size, o.Keep)
	Report(o.Out, phases, floor)
	return err
}

// measure runs the scenario at size in a throwaway cluster, named after
// this process with suffix, and deletes the cluster unless keep.
func (s Scenario) measure(ctx context.Context, o RunOptions, suffix string, size Size, keep bool) ([]Phase, error) {
	cfg := &v1alpha1.Cluster{}
	if o.Config != nil {
		cfg = o.Config.DeepCopy()
	}
	cfg.Name = fmt.Sprintf("bench-%d%s", os.Getpid(), suffix)
	if s.WithoutKubeletSim {
		cfg.DisableKubeletSim = true
	}
	c, err := NewCluster(ctx, o.Home, cfg, io.Discard)
	if err != nil {
		return nil, err
	}
	if keep {
		fmt.Fprintf(o.Log, "Keeping cluster %q (kubesim delete cluster --name %s)\n", c.Name, c.Name)
	} else {
		defer c.Delete(context.Background())
	}
	return s.Measure(ctx, c, size)
}

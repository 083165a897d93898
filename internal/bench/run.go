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
	Keep   bool      // keep the cluster afterwards, to look into it
	Out    io.Writer // the phases measured
	Log    io.Writer // the note that the cluster is kept
}

// Run creates a throwaway cluster, runs the scenario in it, prints the
// phases it measured (those before a failure too) and deletes the cluster
// unless o.Keep.
func (s Scenario) Run(ctx context.Context, o RunOptions) error {
	cfg := &v1alpha1.Cluster{}
	if o.Config != nil {
		cfg = o.Config.DeepCopy()
	}
	cfg.Name = fmt.Sprintf("bench-%d", os.Getpid())
	if s.WithoutKubeletSim {
		cfg.DisableKubeletSim = true
	}
	c, err := NewCluster(ctx, o.Home, cfg, io.Discard)
	if err != nil {
		return err
	}
	if o.Keep {
		fmt.Fprintf(o.Log, "Keeping cluster %q (kubesim delete cluster --name %s)\n", c.Name, c.Name)
	} else {
		defer c.Delete(context.Background())
	}
	phases, err := s.Measure(ctx, c, o.Size)
	Report(o.Out, phases)
	return err
}

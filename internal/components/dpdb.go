package components

import (
	"context"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/dpdb"
)

// runDPDBController runs the DistributedPodDisruptionBudget controller
// (dpdb.Options) until SIGTERM or SIGINT.
func runDPDBController(args []string) int {
	opts := dpdb.DefaultOptions()
	return runOwn(controlplane.DPDBController, &opts, args, func(ctx context.Context) error {
		return dpdb.Run(ctx, opts)
	})
}

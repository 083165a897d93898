package components

import (
	"context"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/dpdb"
)

// runDPDBController runs the DistributedPodDisruptionBudget controller
// (dpdb.Options) until SIGTERM or SIGINT, with clients of the cluster its
// kubeconfig names.
func runDPDBController(args []string) int {
	opts := dpdb.DefaultOptions()
	return runOwn(controlplane.DPDBController, &opts, args, func(ctx context.Context) error {
		if err := opts.Validate(); err != nil {
			return err
		}
		clients, err := dpdb.ClientsFor(opts.Kubeconfig)
		if err != nil {
			return err
		}
		c, err := dpdb.New(opts, clients)
		if err != nil {
			return err
		}
		return c.Run(ctx)
	})
}

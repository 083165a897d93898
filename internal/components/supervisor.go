package components

import (
	"context"

	"github.com/kubesim/kubesim/internal/controlplane"
)

// runSupervisor runs a cluster's control plane (controlplane.Supervise).
func runSupervisor(args []string) int {
	var opts controlplane.SupervisorOptions
	return runOwn(controlplane.Supervisor, &opts, args, func(ctx context.Context) error {
		return controlplane.Supervise(ctx, opts)
	})
}

package components

import (
	"context"

	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// runSupervisor runs a cluster's control plane (supervisor.Supervise).
func runSupervisor(args []string) int {
	var opts supervisor.Options
	return component.RunOwn(supervisor.Name, &opts, args, func(ctx context.Context) error {
		return supervisor.Supervise(ctx, opts)
	})
}

package components

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
)

// runSupervisor runs a cluster's control plane until SIGTERM or SIGINT.
func runSupervisor(args []string) int {
	var opts controlplane.SupervisorOptions
	if !parseArgs(controlplane.Supervisor, &opts, args) {
		return 2
	}
	logger := log.New(os.Stderr, "supervisor: ", log.LstdFlags|log.Lmicroseconds)
	d, err := clusterdir.Open(opts.Home, opts.Name)
	if err != nil {
		logger.Print(err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := controlplane.Supervise(ctx, d, logger); err != nil {
		logger.Print(err)
		return 1
	}
	return 0
}

package components

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
)

// runSupervisor runs a cluster's control plane until SIGTERM or SIGINT.
func runSupervisor(args []string) int {
	fs := pflag.NewFlagSet("supervisor", pflag.ContinueOnError)
	home := fs.String("home", "", "kubesim home directory")
	name := fs.String("name", "", "cluster name")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	logger := log.New(os.Stderr, "supervisor: ", log.LstdFlags|log.Lmicroseconds)
	d, err := clusterdir.Open(*home, *name)
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

package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/version"
)

// runKubeletSim runs the kubelet simulator against the cluster of a
// kubeconfig until SIGTERM or SIGINT.
func runKubeletSim(args []string) int {
	opts := kubeletsim.DefaultOptions()
	opts.Version = version.Version
	fs := pflag.NewFlagSet("kubelet-sim", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := kubeletsim.Run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		return 1
	}
	return 0
}

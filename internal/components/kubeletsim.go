package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/version"
)

// runKubeletSim runs the kubelet simulator against the cluster of a
// kubeconfig until SIGTERM or SIGINT.
func runKubeletSim(args []string) int {
	opts := kubeletsim.DefaultOptions()
	opts.Version = version.Version
	fs := pflag.NewFlagSet("kubelet-sim", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (empty: in-cluster config)")
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := RunKubeletSim(ctx, *kubeconfig, opts); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		return 1
	}
	return 0
}

// RunKubeletSim runs the simulator with a kubeconfig file (or, if empty,
// the in-cluster configuration).
func RunKubeletSim(ctx context.Context, kubeconfig string, opts kubeletsim.Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	opts.Config = cfg
	return kubeletsim.Run(ctx, opts)
}

package components

import (
	"context"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/version"
)

// runKubeletSim runs the kubelet simulator against the cluster of a
// kubeconfig (kubeletsim.Options).
func runKubeletSim(args []string) int {
	opts := kubeletsim.DefaultOptions()
	opts.Version = version.Version
	return runOwn(controlplane.KubeletSim, &opts, args, func(ctx context.Context) error {
		return kubeletsim.Run(ctx, opts)
	})
}

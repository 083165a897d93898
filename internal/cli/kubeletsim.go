package cli

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/version"
)

func newKubeletSimCommand() *cobra.Command {
	opts := kubeletsim.DefaultOptions()
	opts.Version = version.Version
	cmd := &cobra.Command{
		Use:   "kubelet-sim --kubeconfig FILE",
		Short: "Simulate the kubelets of any cluster's fake nodes (annotated kwok.x-k8s.io/node=fake by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return kubeletsim.Run(cmd.Context(), opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

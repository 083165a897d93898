package cli

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
)

// newFederateCommand wires clusters into one DistributedPodDisruptionBudget
// federation.
func newFederateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "federate CLUSTER CLUSTER...",
		Short: "Let clusters' DistributedPodDisruptionBudgets federate PDBs of each other",
		Long: "Writes in each named cluster a Secret (kubesim-dpdb/federation) with a kubeconfig for each of the\n" +
			"others, whose identity may only read PodDisruptionBudgets and take lock Leases there.",
		Example: "  kubesim federate red blue green",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cluster.NewProvider("", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return p.Federate(cmd.Context(), args)
		},
	}
}

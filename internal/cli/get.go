package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/internal/cluster"
)

func newGetCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "get", Short: "Show clusters and their kubeconfigs"}
	cmd.AddCommand(newGetClustersCommand(), newGetKubeconfigCommand())
	return cmd
}

func newGetClustersCommand() *cobra.Command {
	f := &clusterFlags{}
	return &cobra.Command{
		Use:     "clusters",
		Aliases: []string{"cluster"},
		Short:   "List clusters",
		Args:    cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			infos, err := p.List()
			if err != nil {
				return err
			}
			if len(infos) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "No clusters. Create one with: kubesim create cluster")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 3, ' ', 0)
			fmt.Fprintln(w, "NAME\tSTATUS\tAPI SERVER\tAGE")
			for _, i := range infos {
				status := "stopped"
				if i.Running {
					status = "running"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", i.Name, status, i.APIServer, duration.HumanDuration(time.Since(i.Created)))
			}
			return w.Flush()
		}),
	}
}

func newGetKubeconfigCommand() *cobra.Command {
	f := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "kubeconfig",
		Short: "Print a cluster's admin kubeconfig (context kubesim-NAME)",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			cfg, err := p.AdminKubeconfig(f.name)
			if err != nil {
				return err
			}
			data, err := clientcmd.Write(*cfg)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		}),
	}
	f.addName(cmd)
	return cmd
}

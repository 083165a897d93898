package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/nodecost"
	"github.com/kubesim/kubesim/internal/scale"
)

func newGetCommand() *cobra.Command {
	return group("get", "Show clusters, their kubeconfigs, their NodePools' cost and the default node template",
		newGetClustersCommand(), newGetKubeconfigCommand(), newGetCostCommand(), newGetNodeTemplateCommand())
}

func newGetClustersCommand() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:     "clusters",
		Aliases: []string{"cluster"},
		Short:   "List clusters",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := cluster.NewProvider("", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			infos, err := p.List()
			if err != nil {
				return err
			}
			if infos == nil {
				infos = []cluster.Info{} // [] in JSON, not null
			}
			return out.print(cmd.OutOrStdout(), infos, func(w io.Writer) error {
				return printClusters(w, cmd.ErrOrStderr(), infos)
			})
		},
	}
	out.add(cmd)
	return cmd
}

// printClusters writes the clusters as a table, or, if there are none, a
// hint to errOut.
func printClusters(w, errOut io.Writer, infos []cluster.Info) error {
	if len(infos) == 0 {
		_, err := fmt.Fprintln(errOut, "No clusters. Create one with: kubesim create cluster")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tKUBERNETES\tAPI SERVER\tAGE\tTIME SCALE\tCLUSTER TIME")
	for _, i := range infos {
		status := i.Status
		if i.Cause != "" {
			status += " (" + i.Cause + ")"
		}
		// AGE is in the cluster's time, as kubectl's ages are.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d×\t%s\n", i.Name, status, i.Kubernetes, i.APIServer,
			duration.HumanDuration(i.Time.Sub(i.Created)), i.TimeScale, i.Time.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
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
	f.add(cmd)
	return cmd
}

func newGetCostCommand() *cobra.Command {
	// On the cluster's clock: the nodes there now have cost until now in
	// the cluster's time.
	f := &clusterFlags{onClusterClock: true}
	var out output
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Show node-hours and cost per NodePool of a cluster with --autoscaler karpenter",
		Long: `Show, per NodePool, its nodes now, the nodes it has launched, their node-hours and their cost
over the cluster's life, in the cluster's time. A node costs its price per hour from when it
appeared until it was gone (drained and terminated, as a cloud bills it).

Prices are the instance-type catalog's, not a bill: the price of the offering Karpenter chose for
each node, from the KWOK provider's catalog (its instance_types.json) or the cluster's own
instance types file, as the node's eks-node-viewer/instance-price label says.`,
		Args: cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			r, err := nodecost.ClusterReport(p.Home, f.name, time.Now())
			if err != nil {
				return err
			}
			return out.print(cmd.OutOrStdout(), r, func(w io.Writer) error {
				return printCost(w, cmd.ErrOrStderr(), r)
			})
		}),
	}
	f.add(cmd)
	out.add(cmd)
	return cmd
}

// printCost writes a cluster's cost as a table with a total, or, if no
// NodePool has had a node yet, says so to errOut.
func printCost(w, errOut io.Writer, r *nodecost.Report) error {
	if len(r.NodePools) == 0 {
		_, err := fmt.Fprintln(errOut, "No NodePool has launched a node yet.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "NODEPOOL\tNODES\tLAUNCHED\tNODE-HOURS\tCOST/H\tCOST")
	row := func(name string, p nodecost.PoolCost) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.4f\t%.4f\n", name, p.Nodes, p.Launched, p.NodeHours, p.CostPerHour, p.Cost)
	}
	for _, p := range r.NodePools {
		row(p.NodePool, p)
	}
	row("TOTAL", r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nAt cluster time %s. Prices are the instance-type catalog's, per hour, not a bill.\n",
		r.Time.UTC().Format(time.RFC3339))
	return err
}

func newGetNodeTemplateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "node-template",
		Short: "Print the v1 Node simulated nodes are stamped from unless given --node-template",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(scale.DefaultManifest)
			return err
		},
	}
}

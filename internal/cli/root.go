// Package cli is kubesim's command line: each file one group of commands,
// each command a thin layer from flags to the packages that do the work.
package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
)

// Main runs the CLI with args and returns the exit code. Errors are printed
// as one line, never as a usage dump or a stack trace.
func Main(args []string) int {
	// The first Ctrl-C asks the command to wind up (a stop kills at once
	// rather than waiting); a second one ends kubesim as it would anyway.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	root := NewRootCommand()
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(root.ErrOrStderr(), "kubesim: %v\n", err)
		return 1
	}
	return 0
}

// NewRootCommand builds the kubesim command tree.
func NewRootCommand() *cobra.Command {
	dropUpstreamVersionFlag()
	root := &cobra.Command{
		Use:           "kubesim",
		Short:         "Simulated Kubernetes clusters: a real control plane, simulated kubelets",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newClusterVerbCommands()...)
	root.AddCommand(
		newGetCommand(),
		newScaleCommand(),
		newNodeCommand(),
		newDeschedulerCommand(),
		newRunCommand(),
		newExplainCommand(),
		newKubeletSimCommand(),
		newDPDBControllerCommand(),
		newKubectlCommand(),
		newSnapshotCommand(),
		newFederateCommand(),
		newLogsCommand(),
		newBenchCommand(),
		newVersionCommand(),
		newComponentCommand(),
	)
	return root
}

// group is a command that only holds subcommands, such as `kubesim get`.
func group(use, short string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subcommands...)
	return cmd
}

// clusterFlags are the flags every command aimed at one cluster has.
type clusterFlags struct {
	name       string
	kubeconfig string
}

// add adds --name and --kubeconfig, the file the cluster's context is
// written to.
func (f *clusterFlags) add(cmd *cobra.Command) {
	f.addName(cmd)
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "",
		"kubeconfig to write the cluster's context to (default $KUBECONFIG or ~/.kube/config)")
}

// addName adds only --name, for commands that never touch the user's
// kubeconfig.
func (f *clusterFlags) addName(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", v1alpha1.DefaultClusterName, "cluster name")
}

// run makes a RunE that gives do the cluster provider for these flags. A
// --name given must be a cluster name: --name "" never means the default.
func (f *clusterFlags) run(do func(cmd *cobra.Command, p *cluster.Provider, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("name") {
			if err := v1alpha1.ValidateName(f.name); err != nil {
				return err
			}
		}
		p, err := cluster.NewProvider(f.kubeconfig, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		return do(cmd, p, args)
	}
}

// newComponentCommand documents `kubesim component`, which main handles
// before cobra sees it.
func newComponentCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "component NAME [ARGS...]",
		Short:  "Run one control-plane component (used by the supervisor)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("component: name one component to run")
		},
	}
}

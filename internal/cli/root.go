// Package cli is kubesim's command line: each file one group of commands,
// each command a thin layer from flags to the packages that do the work.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
)

// Main runs the CLI with args and returns the exit code. Errors are printed
// as one line, never as a usage dump or a stack trace.
func Main(args []string) int {
	ctx, stop := interrupts(os.Stderr)
	defer stop()
	root := NewRootCommand()
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		// Cobra ends its suggestions with a line break.
		fmt.Fprintf(root.ErrOrStderr(), "kubesim: %s\n", strings.TrimRight(err.Error(), "\n"))
		return 1
	}
	return 0
}

// interrupts is the command's context, cancelled by the first Ctrl-C (or
// SIGTERM): the command winds up, and its clean-up (a run's clusters) goes
// on, a stop killing at once rather than waiting. A second says so and
// goes on cleaning up; only a third leaves at once, saying what may be
// left, with exit status 130.
func interrupts(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for n := 1; ; n++ {
			if _, ok := <-sigs; !ok {
				return
			}
			switch n {
			case 1:
				cancel()
			case 2:
				fmt.Fprintln(stderr, "kubesim: interrupted again: still winding up and cleaning up (clusters are killed, not stopped); interrupt once more to leave at once, unfinished")
			default:
				fmt.Fprintln(stderr, "kubesim: interrupted three times: leaving the clean-up unfinished; `kubesim get clusters` shows what is left, `kubesim delete cluster --name NAME` removes it")
				os.Exit(130)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
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
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newClusterVerbCommands()...)
	root.AddCommand(
		newGetCommand(),
		newScaleCommand(),
		newNodeCommand(),
		newDeschedulerCommand(),
		newRunCommand(),
		newExplainCommand(),
		newKueueCommand(),
		newUICommand(),
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
// Run without one, or with one it does not have, it fails (after its help,
// or with the nearest names), as kubectl's do: cobra would print the help
// and exit 0, and a script would carry on after `kubesim get clusterz`.
func group(use, short string, subcommands ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:                        use,
		Short:                      short,
		SuggestionsMinimumDistance: 2,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			if err := cmd.Help(); err != nil {
				return err
			}
			return fmt.Errorf("%q needs a command, such as %q", cmd.CommandPath(), cmd.CommandPath()+" "+cmd.Commands()[0].Name())
		},
	}
	cmd.AddCommand(subcommands...)
	return cmd
}

// unknownCommand is cobra's own error for an unknown command of the root,
// with its suggestions, for any command that holds subcommands.
func unknownCommand(cmd *cobra.Command, typed string) error {
	msg := fmt.Sprintf("unknown command %q for %q", typed, cmd.CommandPath())
	if suggestions := cmd.SuggestionsFor(typed); len(suggestions) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t")
	} else {
		msg += fmt.Sprintf("; see %q", cmd.CommandPath()+" --help")
	}
	return errors.New(msg)
}

// clusterFlags are the flags every command aimed at one cluster has.
type clusterFlags struct {
	name       string
	kubeconfig string
	// onClusterClock: the command reasons about the cluster's time (pod
	// ages, a descheduler's PodLifeTime), so it runs on the cluster's
	// clock, re-executed onto it when the cluster's is scaled.
	onClusterClock bool
}

// add adds --name and --kubeconfig: the file whose current context says
// which cluster to act on without --name, and that create and start write
// the cluster's context to.
func (f *clusterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", v1alpha1.DefaultClusterName,
		"cluster name (default: the current context's cluster, kubesim-NAME, else "+v1alpha1.DefaultClusterName+")")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "",
		"kubeconfig whose current context chooses the cluster, and that takes its context (default $KUBECONFIG or ~/.kube/config)")
}

// run makes a RunE that gives do the cluster provider for these flags,
// with f.name set to the cluster the command acts on (cluster.Target:
// --name, else the current context's kubesim cluster, else "kubesim"),
// and, without --name, says which and why on stderr first. A --name given
// must be a cluster name: --name "" never means the default.
func (f *clusterFlags) run(do func(cmd *cobra.Command, p *cluster.Provider, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		p, err := cluster.NewProvider(f.kubeconfig, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		target, err := p.Target(f.name, cmd.Flags().Changed("name"))
		if err != nil {
			return err
		}
		f.name = target.Name
		if _, testing := cmd.Context().Value(targetOnly{}).(*cluster.Target); f.onClusterClock && !testing {
			if clock, err := p.Clock(target.Name); err == nil {
				if err := clusterclock.Reexec(clock); err != nil {
					return err
				}
			}
		}
		if !cmd.Flags().Changed("name") { // else the user said which
			fmt.Fprintln(cmd.ErrOrStderr(), target)
		}
		if seen, ok := cmd.Context().Value(targetOnly{}).(*cluster.Target); ok {
			*seen = target
			return errTargetOnly
		}
		return p.Missing(target, do(cmd, p, args))
	}
}

// targetOnly, as a key of a command's context holding a *cluster.Target,
// makes clusterFlags.run stop once it has chosen the cluster, keeping it
// there: the test that every command chooses its cluster by one rule.
type targetOnly struct{}

var errTargetOnly = errors.New("stopped once the cluster was chosen")

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

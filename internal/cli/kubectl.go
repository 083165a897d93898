package cli

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/cli"
	kubectl "k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/plugin"
	"k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
)

func newKubectlCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "kubectl [--name NAME] ARGS...",
		Short: "Run the embedded kubectl against a cluster (context preset)",
		Long: "Runs kubectl, built into kubesim, with the cluster's admin kubeconfig.\n" +
			"--name, if given, must come before kubectl's own arguments; without it, the cluster of\n" +
			"the current kubectl context when it is a kubesim cluster's (kubesim-NAME), else \"" + v1alpha1.DefaultClusterName + "\".",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, given, args := splitNameFlag(args)
			p, err := cluster.NewProvider("", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			target, err := p.Target(name, given)
			if err != nil {
				return err
			}
			kubeconfig, err := p.KubeconfigPath(target.Name)
			if err != nil {
				// Said only here, and only if the user did not say which:
				// kubectl's output is kubectl's own.
				if !given {
					fmt.Fprintln(cmd.ErrOrStderr(), target)
				}
				return p.Missing(target, err)
			}
			// On the cluster's clock, so that ages and timeouts are in
			// its time.
			if clock, err := p.Clock(target.Name); err == nil {
				if err := clusterclock.Reexec(clock); err != nil {
					return err
				}
			}
			// kubectl's Ctrl-C is kubectl's: its own handlers, else the end.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			streams := genericiooptions.IOStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
			runKubectl(streams, kubeconfig, args)
			return nil
		},
	}
}

// splitNameFlag takes a leading --name NAME (or --name=NAME) off args, and
// says whether there was one; any later --name belongs to kubectl (as in
// `kubectl expose --name`).
func splitNameFlag(args []string) (name string, given bool, rest []string) {
	for len(args) > 0 {
		switch {
		case args[0] == "--name" && len(args) > 1:
			name, given, args = args[1], true, args[2:]
		case strings.HasPrefix(args[0], "--name="):
			name, given, args = strings.TrimPrefix(args[0], "--name="), true, args[1:]
		default:
			return name, given, args
		}
	}
	return name, given, args
}

// runKubectl runs kubectl in this process, as its own main does: it
// returns when kubectl succeeds; when kubectl fails, it prints the error
// and exits the process with kubectl's exit code (util.CheckErr, which
// kubectl's commands also call themselves).
func runKubectl(streams genericiooptions.IOStreams, kubeconfig string, args []string) {
	os.Setenv("KUBECONFIG", kubeconfig)
	cmd := kubectl.NewDefaultKubectlCommandWithArgs(kubectl.KubectlOptions{
		PluginHandler: kubectl.NewDefaultPluginHandler(plugin.ValidPluginFilenamePrefixes),
		Arguments:     append([]string{"kubectl"}, args...),
		ConfigFlags:   kubectlConfigFlags(streams),
		IOStreams:     streams,
	})
	cmd.SetArgs(args)
	util.CheckErr(cli.RunNoErrOutput(cmd))
}

// kubectlConfigFlags are kubectl's own defaults (k8s.io/kubectl/pkg/cmd).
func kubectlConfigFlags(streams genericiooptions.IOStreams) *genericclioptions.ConfigFlags {
	return genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().
		WithDiscoveryBurst(300).WithDiscoveryQPS(50.0).WithWarningPrinter(streams)
}

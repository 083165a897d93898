package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	kubesimversion "github.com/kubesim/kubesim/internal/version"
)

func newVersionCommand() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kubesim's version, the Kubernetes version it runs and the patches its build applied",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := kubesimversion.Get()
			return out.print(cmd.OutOrStdout(), info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "kubesim %s (Kubernetes %s, API revision %d)\n%s\n%s\n",
					info.Kubesim, info.Kubernetes, info.APIRevision, kubesimversion.PatchesLine(), kubesimversion.ClockLine())
				return err
			})
		},
	}
	out.add(cmd)
	return cmd
}

// dropUpstreamVersionFlag takes the --version flag that
// k8s.io/component-base/version/verflag registers off pflag.CommandLine,
// which cobra merges into every command's flags (the embedded kubectl's
// too): `kubesim version` is the one way to ask. `kubesim component`
// never gets here, so the upstream components keep their --version.
func dropUpstreamVersionFlag() {
	all := pflag.CommandLine
	if all.Lookup("version") == nil {
		return
	}
	rest := pflag.NewFlagSet(all.Name(), pflag.ExitOnError)
	rest.SetNormalizeFunc(all.GetNormalizeFunc())
	all.VisitAll(func(f *pflag.Flag) {
		if f.Name != "version" {
			rest.AddFlag(f)
		}
	})
	pflag.CommandLine = rest
}

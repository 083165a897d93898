package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/internal/kubeversion"
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
			for _, v := range kubeversion.Built() {
				info.KubernetesVersions = append(info.KubernetesVersions, v.Release)
			}
			return out.print(cmd.OutOrStdout(), info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "kubesim %s (Kubernetes %s, API revision %d)\n%s\n%s\n%s\n",
					info.Kubesim, info.Kubernetes, info.APIRevision, versionsLine(), kubesimversion.PatchesLine(), kubesimversion.ClockLine())
				return err
			})
		},
	}
	out.add(cmd)
	return cmd
}

// versionsLine lists the Kubernetes versions a cluster can run, and those
// kubesim offers that this build lacks.
func versionsLine() string {
	var built, missing []string
	for _, v := range kubeversion.Offered() {
		if v.Binary() == nil {
			built = append(built, v.Minor+" ("+v.Release+")")
		} else {
			missing = append(missing, v.Minor)
		}
	}
	line := "Kubernetes versions (--kubernetes): " + strings.Join(built, ", ")
	if len(missing) > 0 {
		line += "; not built: " + strings.Join(missing, ", ") + " (make build VERSIONS=…)"
	}
	return line
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

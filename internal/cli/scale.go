package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/manifest"
	"github.com/kubesim/kubesim/internal/scale"
)

func newScaleCommand() *cobra.Command {
	return group("scale", "Add or remove simulated nodes", newScaleNodeCommand())
}

// nodeFlags describe the nodes to make, for `scale node` and `create cluster --nodes`.
type nodeFlags struct {
	template string
	labels   []string
	// templateFrom and labelsFrom are what the user gave them as, for
	// errors to name: --node-template, its alias --template, or a
	// Cluster file's nodeTemplate (default --node-template, --node-label).
	templateFrom, labelsFrom string
}

// from names, for errors, the flags of cmd the template and labels were
// given by: the aliases if only they were used.
func (f *nodeFlags) from(cmd *cobra.Command) {
	f.templateFrom, f.labelsFrom = "--node-template", "--node-label"
	if fl := cmd.Flags(); fl.Lookup("template") != nil && fl.Changed("template") && !fl.Changed("node-template") {
		f.templateFrom = "--template"
	}
	if fl := cmd.Flags(); fl.Lookup("label") != nil && fl.Changed("label") && !fl.Changed("node-label") {
		f.labelsFrom = "--label"
	}
}

func (f *nodeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.template, "node-template", "", nodeTemplateUsage)
	f.addLabels(cmd)
}

// addLabels adds --node-label alone: create cluster's --node-template is
// one of its specFlags.
func (f *nodeFlags) addLabels(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.labels, "node-label", nil, "a label k=v for every node (repeatable)")
}

const nodeTemplateUsage = "a v1 Node manifest the nodes are stamped from"

// options turns the flags into scale options (template read and checked),
// with progress written to progress.
func (f *nodeFlags) options(progress io.Writer, replicas int, wait time.Duration) (scale.Options, error) {
	o := scale.Options{Replicas: replicas, Wait: wait, Progress: progress, Terminal: isTerminal(progress)}
	if f.templateFrom == "" {
		f.templateFrom = "--node-template"
	}
	if f.labelsFrom == "" {
		f.labelsFrom = "--node-label"
	}
	if f.template != "" {
		data, err := os.ReadFile(f.template)
		if err != nil {
			return o, fmt.Errorf("%s: %w", f.templateFrom, err)
		}
		if o.Template, err = scale.ParseTemplate(data); err != nil {
			return o, fmt.Errorf("%s %w", f.templateFrom, manifest.InFile(f.template, err))
		}
	}
	for _, l := range f.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return o, fmt.Errorf("%s %q: want key=value", f.labelsFrom, l)
		}
		if o.Group.Labels == nil {
			o.Group.Labels = map[string]string{}
		}
		o.Group.Labels[k] = v
	}
	return o, nil
}

// isTerminal reports whether w is a terminal, where a progress bar can be
// redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

func newScaleNodeCommand() *cobra.Command {
	f := &clusterFlags{}
	nodes := &nodeFlags{}
	var replicas int
	var group string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "node --replicas N [--group NAME]",
		Short: "Give a node group N nodes in all, not N more (node-000000 … node-<N-1> without --group), creating or deleting, and wait until they are Ready",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			if !cmd.Flags().Changed("replicas") {
				return fmt.Errorf("--replicas: required, e.g. --replicas 10")
			}
			nodes.from(cmd)
			o, err := nodes.options(cmd.ErrOrStderr(), replicas, wait)
			if err != nil {
				return err
			}
			if err := v1alpha1.CheckNodeCount(replicas); err != nil {
				return fmt.Errorf("--replicas: %w", err)
			}
			o.Group.Name = group
			return p.ScaleNodes(cmd.Context(), f.name, o)
		}),
	}
	f.add(cmd)
	cmd.Flags().IntVar(&replicas, "replicas", 0, "how many nodes the group should have in all")
	cmd.Flags().StringVar(&group, "group", "", "the node group to scale, as the cluster's nodeGroups name it (default: the unnamed group, node-000000 …)")
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "how long to wait for the nodes to be Ready (0: don't wait)")
	nodes.add(cmd)
	// Said here: a scale that adds no node changes none.
	cmd.Flags().Lookup("node-template").Usage = "a v1 Node manifest the nodes this scale makes are stamped from (nodes the group has stay as they are)"
	cmd.Flags().Lookup("node-label").Usage = "a label k=v for the nodes this scale makes (repeatable; nodes the group has stay as they are)"
	// `--template` and `--label`, as the issue and KWOK users write them.
	cmd.Flags().StringVar(&nodes.template, "template", "", "alias of --node-template")
	cmd.Flags().StringArrayVar(&nodes.labels, "label", nil, "alias of --node-label")
	return cmd
}

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/manifest"
)

const defaultWait = 3 * time.Minute

// newClusterVerbCommands are create, delete, start and stop, each holding
// its `cluster` subcommand (as kind's verbs do).
func newClusterVerbCommands() []*cobra.Command {
	return []*cobra.Command{
		group("create", "Create a cluster", newCreateClusterCommand()),
		group("delete", "Delete clusters", newDeleteClusterCommand()),
		group("start", "Start a stopped cluster", newStartClusterCommand()),
		group("stop", "Stop a running cluster, keeping its data", newStopClusterCommand()),
		group("upgrade", "Upgrade a cluster's control plane", newUpgradeClusterCommand()),
	}
}

// createClusterFlags are create cluster's flags: the cluster's options
// (specFlags, laid over the --config file by spec) and the command's own.
type createClusterFlags struct {
	clusterFlags
	config    string
	spec      func(*v1alpha1.ClusterSpec) error
	nodeFlags nodeFlags
	wait      time.Duration
	retain    bool
	ownerPID  int
	ui        bool
}

func newCreateClusterCommand() *cobra.Command {
	f := &createClusterFlags{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Create a simulated cluster and wait until it is ready",
		Args:  cobra.NoArgs,
		// Not f.run: --name names the new cluster, the current context's
		// cluster being no default for it.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("name") {
				if err := v1alpha1.ValidateName(f.name); err != nil {
					return err
				}
			}
			p, err := cluster.NewProvider(f.kubeconfig, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			c, err := f.clusterConfig(cmd)
			if err != nil {
				return err
			}
			f.nodeFlags.template = c.NodeTemplate // the flag's, or the config's
			f.nodeFlags.from(cmd)
			if !cmd.Flags().Changed("node-template") && f.config != "" {
				f.nodeFlags.templateFrom = "nodeTemplate (--config " + f.config + ")"
			}
			nodes, err := f.nodeFlags.options(cmd.ErrOrStderr(), c.Nodes, f.wait)
			if err != nil {
				return err
			}
			if err := p.Create(cmd.Context(), c, cluster.CreateOptions{Wait: f.wait, Retain: f.retain, Nodes: nodes, OwnerPID: f.ownerPID}); err != nil || !f.ui {
				return err
			}
			return (&uiFlags{address: "127.0.0.1", drainTimeout: 30 * time.Second}).serve(cmd, p, c.Name, f.kubeconfig)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", v1alpha1.DefaultClusterName, "the new cluster's name")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig to write the cluster's context to (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.config, "config", "", "a kubesim.io/v1alpha1 Cluster file; flags override it")
	f.spec = addSpecFlags(fl)
	f.nodeFlags.addLabels(cmd)
	fl.DurationVar(&f.wait, "wait", defaultWait, "how long to wait for the cluster (and its nodes) to be ready")
	fl.BoolVar(&f.retain, "retain", false, "keep a cluster that failed to start, for its logs")
	fl.BoolVar(&f.ui, "ui", false, "once the cluster is ready, serve its web page as kubesim ui does, until Ctrl-C (the cluster stays)")
	fl.IntVar(&f.ownerPID, "owner-pid", 0, "stop the cluster when this process exits, e.g. $$ in a CI job (a later start clears it)")
	return cmd
}

// loadConfigFlag reads the Cluster file given by --config; without one, the
// config is empty (all defaults).
func loadConfigFlag(path string) (*v1alpha1.Cluster, error) {
	if path == "" {
		return &v1alpha1.Cluster{}, nil
	}
	c, err := cluster.LoadConfig(path)
	var unreadable *fs.PathError
	switch {
	case errors.As(err, &unreadable): // it names the file already
		return nil, fmt.Errorf("--config: %w", err)
	case err != nil:
		return nil, fmt.Errorf("--config %w", manifest.InFile(path, err))
	}
	return c, nil
}

// clusterConfig reads --config, if given, and lays the set flags over it.
func (f *createClusterFlags) clusterConfig(cmd *cobra.Command) (*v1alpha1.Cluster, error) {
	c, err := loadConfigFlag(f.config)
	if err != nil {
		return nil, err
	}
	if cmd.Flags().Changed("name") || c.Name == "" {
		c.Name = f.name
	}
	if err := f.spec(&c.ClusterSpec); err != nil {
		return nil, err
	}
	return c, nil
}

func newDeleteClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	var all bool
	deleteOne := f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
		return p.Delete(cmd.Context(), f.name)
	})
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Stop a cluster, remove its files and its kubeconfig context",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all {
				return deleteOne(cmd, args)
			}
			if cmd.Flags().Changed("name") {
				return errors.New("--all and --name: give one or the other")
			}
			p, err := cluster.NewProvider(f.kubeconfig, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return p.DeleteAll(cmd.Context())
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "delete every cluster")
	return cmd
}

func newStartClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start a stopped cluster with its data, and wait until it is ready",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			return p.Start(cmd.Context(), f.name, wait)
		}),
	}
	f.add(cmd)
	cmd.Flags().DurationVar(&wait, "wait", defaultWait, "how long to wait for the cluster to be ready")
	return cmd
}

func newUpgradeClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	var wait time.Duration
	var to string
	cmd := &cobra.Command{
		Use:   "cluster --kubernetes MINOR",
		Short: "Upgrade a cluster's control plane to the next Kubernetes minor version, in upstream's order, its workloads running",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			if to == "" {
				return errors.New("--kubernetes: give the version to upgrade to, the next minor after the cluster's (kubesim get clusters shows it)")
			}
			return p.UpgradeKubernetes(cmd.Context(), f.name, to, wait)
		}),
	}
	f.add(cmd)
	cmd.Flags().StringVar(&to, "kubernetes", "", "the Kubernetes minor version to upgrade to, such as 1.36: the next after the cluster's")
	cmd.Flags().DurationVar(&wait, "wait", defaultWait, "how long to wait for the upgraded components to be ready")
	return cmd
}

func newStopClusterCommand() *cobra.Command {
	f := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Stop a cluster's processes; its objects stay for the next start",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			return p.Stop(cmd.Context(), f.name)
		}),
	}
	f.add(cmd)
	return cmd
}

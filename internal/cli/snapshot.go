package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
)

func newSnapshotCommand() *cobra.Command {
	return group("snapshot", "Save and restore a cluster's objects (etcd snapshots)", newSnapshotSaveCommand(), newSnapshotRestoreCommand())
}

type snapshotFlags struct {
	clusterFlags
	path string
}

func (f *snapshotFlags) add(cmd *cobra.Command) {
	f.clusterFlags.add(cmd)
	cmd.Flags().StringVar(&f.path, "path", "", "snapshot file (required)")
}

func (f *snapshotFlags) checkPath() error {
	if f.path == "" {
		return errors.New("--path: required; give the snapshot file, e.g. --path snapshot.db")
	}
	return nil
}

func newSnapshotSaveCommand() *cobra.Command {
	f := &snapshotFlags{}
	cmd := &cobra.Command{
		Use:   "save",
		Short: "Write an etcd snapshot of a running cluster",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			if err := f.checkPath(); err != nil {
				return err
			}
			return p.SnapshotSave(cmd.Context(), f.name, f.path)
		}),
	}
	f.add(cmd)
	return cmd
}

func newSnapshotRestoreCommand() *cobra.Command {
	f := &snapshotFlags{}
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Replace a cluster's objects with a snapshot (restarting it if running)",
		Args:  cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			if err := f.checkPath(); err != nil {
				return err
			}
			return p.SnapshotRestore(cmd.Context(), f.name, f.path, wait)
		}),
	}
	f.add(cmd)
	cmd.Flags().DurationVar(&wait, "wait", defaultWait, "how long to wait for the restarted cluster to be ready")
	return cmd
}

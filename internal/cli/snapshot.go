package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/snapshot/anonymize"
	"github.com/kubesim/kubesim/internal/snapshot/export"
)

func newSnapshotCommand() *cobra.Command {
	return group("snapshot", "Save and restore a cluster's objects (etcd snapshots); export any cluster's shape", newSnapshotSaveCommand(), newSnapshotRestoreCommand(), newSnapshotExportCommand())
}

// snapshotExportFlags read any cluster, by its kubeconfig context: not
// one of kubesim's by --name.
type snapshotExportFlags struct {
	context    string
	kubeconfig string
	path       string
	namespaces []string
	anonymize  bool
	key        string
}

func newSnapshotExportCommand() *cobra.Command {
	f := &snapshotExportFlags{}
	cmd := &cobra.Command{
		Use:   "export --context CTX --path FILE",
		Short: "Write any cluster's shape (nodes, workloads, pods where they run, PDBs, …) to a file `create cluster --from` clones; read-only",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.context == "" {
				return errors.New("--context: required; give the kubeconfig context of the cluster to read, e.g. --context prod")
			}
			if f.path == "" {
				return errors.New("--path: required; give the file to write, e.g. --path prod.yaml")
			}
			if f.key != "" && !f.anonymize {
				return errors.New("--anonymize-key: only with --anonymize; add it, or drop the key")
			}
			var key []byte
			if f.anonymize {
				var err error
				if key, err = anonymizeKey(cmd, f.key); err != nil {
					return err
				}
			}
			r, err := readSource(cmd, f.kubeconfig, f.context, f.namespaces)
			if err != nil {
				return err
			}
			if key != nil {
				summary, err := r.Anonymize(anonymize.New(key))
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), summary.String())
			}
			if err := r.WriteFile(f.path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Wrote %s; clone it with: kubesim create cluster --name NAME --from %s\n", f.path, f.path)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.context, "context", "", "kubeconfig context of the cluster to read (required)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig holding the context (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&f.path, "path", "", "file to write (required)")
	fl.StringSliceVarP(&f.namespaces, "namespace", "n", nil, "read only these namespaces' objects (repeatable; default all); cluster-wide kinds are read whole")
	fl.BoolVar(&f.anonymize, "anonymize", false, "rewrite names, label values and images through a keyed hash (the key is printed once)")
	fl.StringVar(&f.key, "anonymize-key", "", "the key an earlier --anonymize export printed, so this one maps names the same way")
	return cmd
}

// anonymizeKey is the given key, or a new one, printed once: with it a
// later export of the same cluster maps every name the same way.
func anonymizeKey(cmd *cobra.Command, given string) ([]byte, error) {
	if given != "" {
		return anonymize.ParseKey(given)
	}
	key, printed := anonymize.NewKey()
	fmt.Fprintf(cmd.ErrOrStderr(), "Anonymizing with a new key (keep it to map a later export the same way: --anonymize-key %s)\n", printed)
	return key, nil
}

// readSource exports the cluster of a context, saying what it read on
// stderr (and each kind's progress there, if it is a terminal).
func readSource(cmd *cobra.Command, kubeconfig, context string, namespaces []string) (*export.Result, error) {
	cfg, err := export.SourceConfig(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	stderr := cmd.ErrOrStderr()
	r, err := export.Export(cmd.Context(), export.Options{Config: cfg, Source: context, Namespaces: namespaces, Progress: stderr, Terminal: isTerminal(stderr)})
	if err != nil {
		return nil, err
	}
	for _, line := range r.Summary() {
		fmt.Fprintln(stderr, line)
	}
	return r, nil
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

package cli

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
)

func newLogsCommand() *cobra.Command {
	f := &clusterFlags{}
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs COMPONENT",
		Short: "Print a component's log (kube-apiserver, etcd, …, supervisor, audit)",
		Args:  cobra.ExactArgs(1),
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, args []string) error {
			path, err := p.LogPath(f.name, args[0])
			if err != nil {
				return err
			}
			return printFile(cmd.Context(), cmd.OutOrStdout(), path, follow)
		}),
	}
	f.add(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing what is appended, until interrupted")
	return cmd
}

// printFile copies path to out, then, if follow, what is written to it
// later — reopening it when it is rotated or truncated.
func printFile(ctx context.Context, out io.Writer, path string, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	for {
		if _, err := io.Copy(out, f); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		if rotated(f, path) {
			f.Close()
			if f, err = os.Open(path); err != nil {
				return err
			}
		}
	}
}

// rotated reports whether path is no longer the file f reads, or shrank.
func rotated(f *os.File, path string) bool {
	open, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil {
		return false
	}
	pos, _ := f.Seek(0, io.SeekCurrent)
	return !os.SameFile(open, now) || now.Size() < pos
}

package cluster

import (
	"errors"
	"fmt"
	"os"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// A snapshot restore unpacks the snapshot beside the cluster's etcd/ (as
// etcd.restore/), then swaps the two with two renames: etcd/ → etcd.old/,
// etcd.restore/ → etcd/. A crash can stop it anywhere; recoverEtcd, run
// before every start and restore, brings the directory back to one whole
// etcd/ from what it finds.

func stagedEtcd(d clusterdir.Dir) string { return d.Etcd() + ".restore" }
func oldEtcd(d clusterdir.Dir) string    { return d.Etcd() + ".old" }

// swapEtcd puts the staged data in place of the cluster's.
func swapEtcd(d clusterdir.Dir) error {
	if err := os.Rename(d.Etcd(), oldEtcd(d)); err != nil {
		return err
	}
	if err := os.Rename(stagedEtcd(d), d.Etcd()); err != nil {
		_ = os.Rename(oldEtcd(d), d.Etcd())
		return err
	}
	return os.RemoveAll(oldEtcd(d))
}

// recoverEtcd finishes or undoes a swap a crash interrupted:
//   - etcd.old/ and no etcd/: stopped between the renames; the restore never
//     finished, so the data it would have replaced goes back (rolled back);
//   - etcd/ and etcd.old/: stopped after the swap; the old data goes;
//   - a leftover etcd.restore/ goes.
//
// A cluster with no etcd/ at all is an error, not a cluster that silently
// comes up empty.
func (p *Provider) recoverEtcd(d clusterdir.Dir) error {
	_, errCur := os.Stat(d.Etcd())
	_, errOld := os.Stat(oldEtcd(d))
	switch {
	case errors.Is(errCur, os.ErrNotExist) && errOld == nil:
		if err := os.Rename(oldEtcd(d), d.Etcd()); err != nil {
			return err
		}
		p.logf("Cluster %q: a snapshot restore was interrupted; its data is as before the restore (run the restore again)", d.Name)
	case errCur == nil && errOld == nil:
		if err := os.RemoveAll(oldEtcd(d)); err != nil {
			return err
		}
	case errors.Is(errCur, os.ErrNotExist):
		return fmt.Errorf("cluster %q has no etcd data (%s is missing): restore a snapshot into it, or delete it", d.Name, d.Etcd())
	case errCur != nil:
		return errCur
	}
	return os.RemoveAll(stagedEtcd(d))
}

package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// clusterNeeds is the free space a cluster needs in kubesim's home: etcd's
// data and the components' logs (each rotated at 100 MB) of a busy one.
const clusterNeeds = 1 << 30

// statfsFunc is syscall.Statfs; tests give their own.
type statfsFunc func(path string, st *syscall.Statfs_t) error

// lowSpaceWarning says, if the filesystem home is on (or would be made
// on) has less free space than a cluster needs, how much it has: a
// cluster on a full disk loses its logs and, when etcd cannot write, its
// API server. "" if there is enough, or if it cannot tell.
func lowSpaceWarning(home string, statfs statfsFunc) string {
	path := home
	var st syscall.Statfs_t
	for {
		err := statfs(path, &st)
		if err == nil {
			break
		}
		parent := filepath.Dir(path)
		if !errors.Is(err, os.ErrNotExist) || parent == path {
			return ""
		}
		path = parent // home is made on its nearest existing ancestor's filesystem
	}
	free := st.Bavail * uint64(st.Bsize)
	if free >= clusterNeeds {
		return ""
	}
	return fmt.Sprintf("only %s free on the filesystem of %s; a cluster needs about %s (etcd's data and logs): on a full disk, etcd fails",
		mebibytes(free), home, mebibytes(clusterNeeds))
}

// mebibytes shows a size in MiB, or GiB from 1 GiB.
func mebibytes(n uint64) string {
	if n%(1<<30) == 0 && n > 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

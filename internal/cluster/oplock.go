package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Start, stop, delete, snapshot restore and scale node of one cluster
// never overlap: each holds the cluster's operation lock while it works,
// and one that finds it taken waits for the other to finish. (The
// supervisor's own lock says whether the cluster runs; this one says
// whether a command is changing it.)

// lockOperation takes d's operation lock, waiting while another command
// holds it, until ctx ends. It fails if the cluster's directory is gone.
func (p *Provider) lockOperation(ctx context.Context, d clusterdir.Dir) (unlock func(), err error) {
	f, err := os.OpenFile(d.OperationLockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		return nil, clusterdir.NotExist(d.Name)
	}
	if err != nil {
		return nil, err
	}
	waiting := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if !waiting {
			p.logf("Waiting for another kubesim command working on cluster %q ...", d.Name)
			waiting = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("cluster %q: gave up waiting for another kubesim command working on it: %w", d.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// The command we waited for may have deleted the cluster.
	if _, err := os.Stat(d.Path); err != nil {
		f.Close()
		return nil, clusterdir.NotExist(d.Name)
	}
	return func() { f.Close() }, nil
}

// operate runs do while holding cluster name's operation lock.
func (p *Provider) operate(ctx context.Context, name string, do func(d clusterdir.Dir) error) error {
	d, err := p.dir(name)
	if err != nil {
		return err
	}
	unlock, err := p.lockOperation(ctx, d)
	if err != nil {
		return err
	}
	defer unlock()
	return do(d)
}

// operationUnderWay reports whether a command holds d's operation lock.
func operationUnderWay(d clusterdir.Dir) bool {
	f, err := os.Open(d.OperationLockFile())
	if err != nil {
		return false
	}
	defer f.Close() // and the lock taken with it
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockWait is how long to wait for another program's lock on the file.
var lockWait = 3 * time.Second

// ErrLocked is wrapped by the error for a kubeconfig whose lock stays held.
var ErrLocked = errors.New("kubeconfig is locked")

// Edit changes the kubeconfig at path (created if missing): it takes
// the file's lock, reads it, lets change edit it and, if anything changed,
// writes it back in one atomic step, then releases the lock. The file
// keeps its mode, less any access by group or others; if that took some
// away, Edit returns the mode the file had, else 0.
func Edit(path string, change func(*Doc) error) (tightenedFrom fs.FileMode, err error) {
	unlock, err := lock(path)
	if err != nil {
		return 0, err
	}
	defer unlock()
	target, data, info, err := read(path)
	if err != nil {
		return 0, err
	}
	doc, err := newDoc(data)
	if err != nil {
		return 0, err
	}
	if err := change(doc); err != nil || !doc.changed {
		return 0, err
	}
	mode := fs.FileMode(0o600)
	if info != nil {
		if mode = info.Mode().Perm() & 0o600; mode != info.Mode().Perm() {
			tightenedFrom = info.Mode().Perm()
		}
	}
	return tightenedFrom, writeFile(target, doc.data, mode, info)
}

// Check reports now whether Edit could write the kubeconfig at path: its
// lock is free (or freed within lockWait), and it and its directory can be
// written. It changes nothing.
func Check(path string) error {
	unlock, err := lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	target, _, _, err := read(path)
	if err != nil {
		return err
	}
	probe, err := os.CreateTemp(filepath.Dir(target), tempPattern(target))
	if err != nil {
		return err
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// lock takes path's lock as client-go's ModifyConfig (and so kubectl
// config) does: by creating path.lock, which fails while it exists. So
// kubesim and they never write the file at once. It waits lockWait for a
// held lock, then names the lock file: a killed program leaves it behind.
func lock(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	lockFile := path + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(lockFile) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: %s exists; if no kubectl or kubesim is running, one was killed and left it: remove it (rm %s)",
				ErrLocked, lockFile, lockFile)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// read returns the file path is (a symlink's target, which is what gets
// replaced), its contents and its FileInfo; a missing file is empty, with
// no FileInfo. A file its owner made read-only is an error.
func read(path string) (target string, data []byte, info fs.FileInfo, err error) {
	target = path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	data, err = os.ReadFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, nil, nil, nil
	}
	if err != nil {
		return target, nil, nil, err
	}
	f, err := os.OpenFile(target, os.O_WRONLY, 0) // only asks; writes nothing
	if err != nil {
		return target, nil, nil, err
	}
	f.Close()
	info, err = os.Stat(target)
	return target, data, info, err
}

// writeFile replaces path with data in one step: a temporary file in the
// same directory, synced, then renamed over it. A crash or a full disk
// leaves the old file or the new one, never part of one, and readers never
// see a half-written file. The new file gets mode and old's owner.
func writeFile(path string, data []byte, mode fs.FileMode, old fs.FileInfo) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if st, ok := ownerOf(old); ok {
		tmp.Chown(int(st.Uid), int(st.Gid)) // best effort: only root may give a file away
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(mode), tmp.Sync(), tmp.Close())
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil { // make the rename itself durable
		d.Sync()
		d.Close()
	}
	return nil
}

func ownerOf(info fs.FileInfo) (*syscall.Stat_t, bool) {
	if info == nil {
		return nil, false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return st, ok
}

// tempPattern names the temporary file beside path, hidden and recognisable.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".kubesim-*" }

// Package execcopy gives the cluster's components a copy of the executable
// they run (kubesim's, or a Kubernetes version's) to run from, held in the
// page cache in small pages.
//
// Every component is the one 305 MB binary. The kernel fills the page cache
// of a file that a process faults in (as exec does) by readahead, in large
// folios, and maps the whole folio around each page a process touches:
// 650–980 KiB a touch, measured on Linux 6.18. A component that touches its
// hot code and type data in some hundred places so holds ~80 MiB of the
// binary, however little of it runs, and holds it again within seconds of
// giving it back. Pages read with readahead off are order-0, and a touch
// maps only the cached pages of its 64 KiB around (the kernel's fault-
// around): the same components hold 9–25 MiB (the API server 54).
//
// So the supervisor runs each component from a copy whose every page was
// read in with readahead off, and reads in again, the same way, whatever of
// it the kernel has since dropped. The copy lives beside the binary (or in
// the user's cache directory), one per build, in a directory only its
// owner can write; anything amiss and the component runs from the binary
// itself, as before.
package execcopy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirName is the directory, beside the binary, that holds its copies.
const dirName = ".kubesim-exec"

// kept is how many builds' copies of one binary a directory keeps: a
// cluster started by an older build restarts its components from its copy
// while it is there.
const kept = 2

// OriginalEnv names, to a supervisor that runs from a copy, the binary it
// was copied from: a Kubernetes version's binary is found beside that one,
// and the components' copies are made of it.
const OriginalEnv = "KUBESIM_EXECUTABLE"

// Executable is the binary this process was started as: the original
// (OriginalEnv) when it runs from a copy, else os.Executable.
func Executable() (string, error) {
	if exe := os.Getenv(OriginalEnv); exe != "" {
		return exe, nil
	}
	return os.Executable()
}

// one makes the supervisor's calls one at a time: it starts a version's
// API server, controller-manager and scheduler at once, which would each
// write that binary's first copy (all valid, the last rename winning,
// two of them wasted writing).
var one sync.Mutex

// For returns the path of exe's copy to run components from, made if
// need be and read into the page cache; exe itself if no copy can be had,
// with the reason.
func For(exe string) (string, error) {
	one.Lock()
	defer one.Unlock()
	st, err := os.Stat(exe)
	if err != nil {
		return exe, err
	}
	var errs []error
	for _, dir := range dirs(exe) {
		path, err := copyIn(dir, exe, st)
		if err == nil {
			if err := readIn(path); err != nil {
				return exe, err
			}
			return path, nil
		}
		errs = append(errs, err)
	}
	return exe, errors.Join(errs...)
}

// dirs are where copies of exe may go, in order: beside it, then in the
// user's cache directory.
func dirs(exe string) []string {
	out := []string{filepath.Join(filepath.Dir(exe), dirName)}
	if cache, err := os.UserCacheDir(); err == nil {
		out = append(out, filepath.Join(cache, "kubesim", "exec"))
	}
	return out
}

// build names one build of exe, the directory its copy goes in: its name,
// and its size, modification time and inode, which a rebuild changes.
func build(exe string, st os.FileInfo) string {
	ino := uint64(0)
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = s.Ino
	}
	return fmt.Sprintf("%s@%d-%d-%d", filepath.Base(exe), st.Size(), st.ModTime().UnixNano(), ino)
}

// copyIn returns the copy of exe in dir, making it if it is not there.
func copyIn(dir, exe string, st os.FileInfo) (string, error) {
	if err := ownDir(dir); err != nil {
		return "", err
	}
	buildDir := filepath.Join(dir, build(exe, st))
	path := filepath.Join(buildDir, filepath.Base(exe))
	if c, err := os.Lstat(path); err == nil && c.Mode().IsRegular() && c.Size() == st.Size() && owned(c) {
		return path, nil
	}
	if err := ownDir(buildDir); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(buildDir, ".copy-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing there
	if err := copyFile(tmp, exe); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	prune(dir, build(exe, st))
	return path, nil
}

// copyFile writes exe into f, executable by its owner alone, and drops
// the pages the writes left in the page cache (a file system may write in
// large folios too), for readIn to read back small.
func copyFile(f *os.File, exe string) error {
	src, err := os.Open(exe)
	if err != nil {
		f.Close()
		return err
	}
	defer src.Close()
	_, err = io.Copy(f, src)
	if err == nil {
		err = f.Chmod(0o700)
	}
	if err == nil {
		err = f.Sync() // only clean pages can be dropped
	}
	if err == nil {
		err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownDir makes dir if need be and checks that only this user can write
// it: a copy there is what the components will run.
func ownDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() || !owned(st) || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: not a directory only this user can write", dir)
	}
	return nil
}

func owned(st os.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(s.Uid) == os.Getuid()
}

// prune removes all but the newest kept builds' copies in dir of the
// binary current is a build of, current among them.
func prune(dir, current string) {
	binary, _, _ := strings.Cut(current, "@")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type old struct {
		name string
		mod  int64
	}
	var olds []old
	for _, e := range entries {
		if !e.IsDir() || e.Name() == current || !strings.HasPrefix(e.Name(), binary+"@") {
			continue
		}
		if info, err := e.Info(); err == nil {
			olds = append(olds, old{e.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(olds, func(i, j int) bool { return olds[i].mod > olds[j].mod })
	for i := kept - 1; i < len(olds); i++ {
		_ = os.RemoveAll(filepath.Join(dir, olds[i].name))
	}
}

// readIn reads into the page cache, with readahead off, the pages of path
// that are not there: order-0 pages, which the components then map a few
// at a time.
func readIn(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := int(st.Size())
	if size == 0 {
		return nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	resident := make([]byte, (size+page-1)/page)
	if err := mincore(m, resident); err != nil {
		return err
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for i := 0; i < len(resident); {
		if resident[i]&1 != 0 {
			i++
			continue
		}
		// A run of missing pages, read in one call: with readahead off it
		// reads those pages and no more.
		j := i
		for j < len(resident) && resident[j]&1 == 0 && (j-i+1)*page <= len(buf) {
			j++
		}
		if _, err := f.ReadAt(buf[:min((j-i)*page, size-i*page)], int64(i*page)); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		i = j
	}
	return nil
}

// mincore fills resident with whether each page of m is in the page cache
// (bit 0), as mincore(2) does.
func mincore(m, resident []byte) error {
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&resident[0])))
	if errno != 0 {
		return errno
	}
	return nil
}

package kubesimtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A test binary killed before its cleanup (go test's -timeout, a cancelled
// CI job) leaves its clusters. Each is created with --owner-pid, so its
// supervisor stops it within a second of the test binary's exit; the
// temporary directory is removed by the next test binary that starts one.

const (
	dirPattern = "kubesimtest-*"
	ownerFile  = "owner.pid"
)

var sweepOnce sync.Once

// newDir makes a cluster's temporary directory, recording this process as
// its owner, after removing those whose owner has exited.
func newDir() (string, error) {
	sweepOnce.Do(removeLeftovers)
	dir, err := os.MkdirTemp("", dirPattern)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// removeLeftovers deletes the clusters and directories of test binaries
// that are gone. Best effort: a directory it cannot judge stays.
func removeLeftovers() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPattern))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 1 || !exited(pid) {
			continue
		}
		if bin, err := Binary(); err == nil {
			// Stops a supervisor that somehow outlived its owner.
			cmd := exec.Command(bin, "delete", "cluster", "--all")
			cmd.Env = append(os.Environ(), "KUBESIM_HOME="+filepath.Join(dir, "home"), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
			_ = cmd.Run()
		}
		_ = os.RemoveAll(dir)
	}
}

// exited reports whether no process has the PID. (One that reuses it keeps
// the directory a while longer: harmless.)
func exited(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

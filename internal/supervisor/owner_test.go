package supervisor

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

func TestOwnerExited(t *testing.T) {
	ownerExited := func(d clusterdir.Dir) bool {
		owner, ok := readOwner(d)
		return ok && !owner.alive()
	}
	d := clusterdir.Dir{Name: "owned", Path: t.TempDir()}
	if _, ok := readOwner(d); ok {
		t.Error("a cluster without an owner counts as owned")
	}
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	o, err := NewOwner(owner.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(d); err != nil {
		t.Fatal(err)
	}
	if ownerExited(d) {
		t.Error("owner counted as exited while it runs")
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	if !ownerExited(d) {
		t.Error("owner still counted as running after it exited")
	}
	// A PID whose process started at another time is someone else's.
	if err := os.WriteFile(d.OwnerFile(), []byte(pidRecord{pid: os.Getpid(), start: 1}.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if !ownerExited(d) {
		t.Error("a reused PID counted as the owner")
	}
	if err := Disown(d); err != nil || ownerExited(d) {
		t.Errorf("after Disown: %v, exited %v", err, ownerExited(d))
	}
}

func TestNewOwnerNamesTheFlag(t *testing.T) {
	for _, pid := range []int{0, 1, 1 << 30} {
		_, err := NewOwner(pid)
		if err == nil || !strings.HasPrefix(err.Error(), "--owner-pid: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("NewOwner(%d) = %v, want a one-line error naming --owner-pid", pid, err)
		}
	}
}

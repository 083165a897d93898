package supervisor

import (
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor this process inherited without close-on-exec (flock(1)'s
// lock) must not pass to the detached supervisor.
func TestLaunchKeepsNoInheritedFiles(t *testing.T) {
	fd, err := syscall.Open(filepath.Join(t.TempDir(), "lock"), syscall.O_CREAT|syscall.O_RDWR, 0o600) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("the test's descriptor is close-on-exec already (%v)", err)
	}
	keepNoInheritedFiles()
	if flags, err = unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("an inherited descriptor would pass to the supervisor (flags %#x, %v)", flags, err)
	}
}

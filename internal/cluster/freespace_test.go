package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLowSpaceWarning(t *testing.T) {
	home := filepath.Join(t.TempDir(), "a", "kubesim")
	// statfs answers for existing paths only, as the kernel does.
	fs := func(avail uint64, existing string) statfsFunc {
		return func(path string, st *syscall.Statfs_t) error {
			if path != existing {
				return &os.PathError{Op: "statfs", Path: path, Err: syscall.ENOENT}
			}
			st.Bsize, st.Bavail = 4096, avail/4096
			return nil
		}
	}
	for _, tc := range []struct {
		name     string
		statfs   statfsFunc
		contains []string // empty: no warning
	}{
		{"plenty", fs(10<<30, home), nil},
		{"exactly enough", fs(1<<30, home), nil},
		{"low", fs(512<<20, home), []string{"only 512 MiB free", home, "needs about 1 GiB"}},
		{"home not made yet: its parent's filesystem", fs(100<<20, filepath.Dir(filepath.Dir(home))), []string{"only 100 MiB free", home}},
		{"cannot tell", func(string, *syscall.Statfs_t) error { return syscall.EACCES }, nil},
	} {
		got := lowSpaceWarning(home, tc.statfs)
		if len(tc.contains) == 0 && got != "" {
			t.Errorf("%s: warned %q", tc.name, got)
		}
		for _, want := range tc.contains {
			if !strings.Contains(got, want) {
				t.Errorf("%s: warning %q does not say %q", tc.name, got, want)
			}
		}
		if strings.Contains(got, "\n") {
			t.Errorf("%s: warning spans lines: %q", tc.name, got)
		}
	}
}

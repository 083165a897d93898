package clusterdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckHomeWarnsOfALooseHome(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "kubesim")
	if w := CheckHome(home); w != "" {
		t.Errorf("a home not made yet: %q", w)
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if w := CheckHome(home); w != "" {
		t.Errorf("a 0700 home of our own: %q", w)
	}
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	if w := CheckHome(home); !strings.Contains(w, "writable by others") {
		t.Errorf("a 0777 home: %q", w)
	}
}

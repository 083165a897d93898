package kubeconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func writeFileForTest(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func loadFile(t *testing.T, path string) *clientcmdapi.Config {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mergeA(t *testing.T) func(*Doc) error {
	return func(d *Doc) error { return d.Merge(ours(t, "kubesim-a", "https://127.0.0.1:1"), "kubesim-a") }
}

func TestEditWaitsForAnotherWritersLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	writeFileForTest(t, path, prod, 0o600)
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := Edit(path, mergeA(t))
		done <- err
	}()
	// The other writer, holding the lock, adds its context, then lets go.
	writeFileForTest(t, path, strings.Replace(prod, "contexts:\n", "contexts:\n- context: {cluster: prod, user: prod}\n  name: other\n", 1), 0o600)
	if err := os.Remove(path + ".lock"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cfg := loadFile(t, path)
	if cfg.Contexts["other"] == nil || cfg.Contexts["kubesim-a"] == nil {
		t.Errorf("a context was lost: %v", cfg.Contexts)
	}
}

func TestEditNamesAStaleLock(t *testing.T) {
	defer func(wait time.Duration) { lockWait = wait }(lockWait)
	lockWait = 100 * time.Millisecond
	path := filepath.Join(t.TempDir(), "config")
	writeFileForTest(t, path, prod, 0o600)
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{"Check": Check(path), "Edit": func() error { _, err := Edit(path, mergeA(t)); return err }()} {
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "rm "+path+".lock") {
			t.Errorf("%s with a stale lock: %v", what, err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != prod {
		t.Errorf("the kubeconfig changed:\n%s", got)
	}
}

func TestEditWritesASymlinksTargetPrivately(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "dotfiles-kubeconfig"), filepath.Join(dir, "config")
	writeFileForTest(t, target, prod, 0o640)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	tightenedFrom, err := Edit(link, mergeA(t))
	if err != nil || tightenedFrom != 0o640 {
		t.Fatalf("Edit = %o, %v; want the old mode 640", tightenedFrom, err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v, %v", info.Mode(), err)
	}
	if info, _ := os.Stat(target); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", info.Mode().Perm())
	}
	if cfg := loadFile(t, target); cfg.Contexts["kubesim-a"] == nil {
		t.Error("the context was not written to the symlink's target")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left beside the kubeconfig: %v", entries)
	}
}

func TestEditThatChangesNothingWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if _, err := Edit(path, func(d *Doc) error { _, err := d.Remove("kubesim-a"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removing from a missing kubeconfig created it: %v", err)
	}
}

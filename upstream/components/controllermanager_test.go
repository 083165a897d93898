package components

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The controller-manager waits until kubesim has set the API server up:
// it returns once the file is there, and soon after, not before.
func TestControllerManagerWaitsForSetUp(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kube-apiserver.set-up")
	writing := make(chan time.Time, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // the API server's bootstrap, simulated
		writing <- time.Now()              // before the write: a wait that returns before it is early
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Error(err)
		}
	}()
	if !waitForFile(context.Background(), file, 30*time.Second) {
		t.Fatal("the set-up file was written, yet the wait says it was not")
	}
	returned := time.Now()
	wrote := <-writing
	if returned.Before(wrote) {
		t.Fatalf("returned %s before the set-up file was written", wrote.Sub(returned))
	}
	if late := returned.Sub(wrote); late > 900*time.Millisecond {
		t.Errorf("returned %s after the set-up file was written", late)
	}
	if waitForFile(context.Background(), filepath.Join(t.TempDir(), "never"), 50*time.Millisecond) {
		t.Error("a file never written was seen: the controller-manager would skip /healthz before the API server is set up")
	}
	cmd := newControllerManagerCommand()
	for _, flag := range []string{"kubeconfig", "api-server-set-up-file", "synced-file", "pod-controllers-held-file"} {
		if cmd.Flags().Lookup(flag) == nil {
			t.Errorf("the wrapped command has no --%s", flag)
		}
	}
	if cmd.RunE == nil {
		t.Error("the wrapped command lost upstream's RunE")
	}
}

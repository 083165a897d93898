package components

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// The controller-manager's wait for /healthz looks often: it returns with
// the first OK, not a second later as upstream's own wait would.
func TestControllerManagerWaitsForHealthzClosely(t *testing.T) {
	var asked, okAt atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		if asked.Add(1) < 4 {
			http.Error(w, "[-]poststarthook/rbac/bootstrap-roles failed", http.StatusInternalServerError)
			return
		}
		okAt.CompareAndSwap(0, time.Now().UnixNano())
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: `+srv.URL+`}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	waitForHealthz(context.Background(), kubeconfig)
	if okAt.Load() == 0 {
		t.Fatalf("returned after %d looks, before /healthz was OK", asked.Load())
	}
	if late := time.Since(time.Unix(0, okAt.Load())); late > 900*time.Millisecond {
		t.Errorf("returned %s after /healthz was OK", late)
	}
	if cmd := newControllerManagerCommand(); cmd.RunE == nil || cmd.Flags().Lookup("kubeconfig") == nil {
		t.Error("the wrapped command lost upstream's RunE or its --kubeconfig flag")
	}
}

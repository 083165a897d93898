package usage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/endpoints/request"
)

// syncedUse is a firstUse whose informers have synced: for tests whose
// listers are filled by hand.
func syncedUse() *firstUse {
	f := newFirstUse()
	f.want()
	close(f.synced)
	return f
}

func TestFirstUseGatesOnlyResourceRequests(t *testing.T) {
	f := newFirstUse()
	served := make(chan string, 4)
	h := f.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served <- r.URL.Path }))
	serve := func(path string, info *request.RequestInfo) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r = r.WithContext(request.WithRequestInfo(r.Context(), info))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}

	// Discovery (the aggregator's availability checks) neither waits nor
	// starts the informers.
	serve("/apis/metrics.k8s.io/v1beta1", &request.RequestInfo{IsResourceRequest: false, Path: "/apis/metrics.k8s.io/v1beta1"})
	if got := <-served; got != "/apis/metrics.k8s.io/v1beta1" {
		t.Fatalf("discovery: served %q", got)
	}
	select {
	case <-f.wanted:
		t.Fatal("discovery started the informers")
	default:
	}

	// A read of a metric starts them and waits until they have synced.
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		done <- serve("/apis/metrics.k8s.io/v1beta1/pods", &request.RequestInfo{IsResourceRequest: true, Resource: "pods"})
	}()
	select {
	case <-f.wanted:
	case <-time.After(10 * time.Second):
		t.Fatal("a read of pods' metrics did not start the informers")
	}
	select {
	case <-served:
		t.Fatal("the read was served before the informers synced")
	case <-time.After(50 * time.Millisecond):
	}
	close(f.synced)
	if rec := <-done; rec.Code != http.StatusOK {
		t.Fatalf("after the sync: status %d", rec.Code)
	}
	if got := <-served; got != "/apis/metrics.k8s.io/v1beta1/pods" {
		t.Fatalf("served %q", got)
	}
}

func TestFirstUseWaitEndsWithTheRequest(t *testing.T) {
	f := newFirstUse()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.wait(ctx); err == nil {
		t.Fatal("wait returned nil for an ended context before the sync")
	}
}

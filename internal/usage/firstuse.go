package usage

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/apiserver/pkg/endpoints/request"
)

// firstUse holds the pod and node informers back until something reads a
// metric: a cluster where nothing does (no HPA, no kubectl top, no scrape)
// keeps no pods in this process and decodes none of their changes, which
// at 10,000 pods was ~200 MiB and a few CPU-seconds of every phase that
// writes pods (issue 52). Once started they stay: what reads a metric
// once (an HPA) reads it again.
type firstUse struct {
	once   sync.Once
	wanted chan struct{} // closed on the first use
	synced chan struct{} // closed when the informers have synced
}

func newFirstUse() *firstUse {
	return &firstUse{wanted: make(chan struct{}), synced: make(chan struct{})}
}

// want starts the informers, if not started yet, without waiting for them.
func (f *firstUse) want() { f.once.Do(func() { close(f.wanted) }) }

// wait starts the informers and waits until they have synced or ctx ends.
func (f *firstUse) wait(ctx context.Context) error {
	f.want()
	select {
	case <-f.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handler gates h's resource requests (a read of a metric) on the
// informers; discovery and the aggregator's availability checks, which
// read no pod, pass at once.
func (f *firstUse) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := request.RequestInfoFrom(r.Context()); ok && info.IsResourceRequest {
			if err := f.wait(r.Context()); err != nil {
				http.Error(w, "kubesim usage-metrics: pods and nodes not listed yet: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

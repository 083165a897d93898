package descheduler

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podWatchPath is a pod watch's path, cluster-wide or in one namespace.
var podWatchPath = regexp.MustCompile(`^/api/v1/(namespaces/[^/]+/)?pods$`)

// podWatch is a pod watch stream of the descheduler's informers, into
// which a dry run adds the deletion of each pod it would have evicted: the
// descheduler's later plugins then see the cluster as a real eviction
// would leave it, as they would in a real run.
type podWatch struct {
	mu  sync.Mutex
	out *io.PipeWriter
}

func (t *tap) watchPods(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	in := resp.Body
	r, w := io.Pipe()
	pw := &podWatch{out: w}
	if t.dryRun { // only vanish writes to them
		t.mu.Lock()
		t.podWatches = append(t.podWatches, pw)
		t.mu.Unlock()
	}
	go func() {
		// JSON watch events come one per line; pass them on whole, so
		// added ones never land inside another.
		lines := bufio.NewReader(in)
		for {
			line, err := lines.ReadBytes('\n')
			pw.mu.Lock()
			_, werr := w.Write(line)
			pw.mu.Unlock()
			t.saw(line)
			if err != nil || werr != nil {
				_ = w.CloseWithError(err)
				_ = in.Close()
				return
			}
		}
	}()
	resp.Body = struct {
		io.Reader
		io.Closer
	}{r, closerFunc(func() error { _ = in.Close(); return r.Close() })}
	return resp, nil
}

// vanish tells the descheduler's pod watches that pod was deleted, and
// returns once their informers have taken it in: each watch event is read
// only after the one before it was handed on, so two bookmarks written
// after the deletion go through only once the deletion is queued. From the
// informer's queue to its index, which the plugins read, is one more
// goroutine hand-off that cannot be observed from here: a short pause
// covers it (without it, a later plugin was once seen counting the pod).
func (t *tap) vanish(pod *corev1.Pod) {
	gone := pod.DeepCopy()
	gone.APIVersion, gone.Kind = "v1", "Pod"
	deleted, err := json.Marshal(map[string]any{"type": "DELETED", "object": gone})
	if err != nil {
		return
	}
	bookmark, err := json.Marshal(map[string]any{"type": "BOOKMARK", "object": map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"resourceVersion": pod.ResourceVersion},
	}})
	if err != nil {
		return
	}
	t.mu.Lock()
	watches := t.podWatches
	t.mu.Unlock()
	for _, pw := range watches {
		pw.mu.Lock()
		for _, line := range [][]byte{deleted, bookmark, bookmark} {
			if _, err := pw.out.Write(append(line, '\n')); err != nil {
				break
			}
		}
		pw.mu.Unlock()
	}
	time.Sleep(indexHandOff)
}

// expectLeaving notes, before a real eviction is sent, that pod's watch
// event showing it terminating is awaited: it may come before the answer.
func (t *tap) expectLeaving(uid types.UID) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.leaving == nil {
		t.leaving = map[types.UID]chan struct{}{}
	}
	seen := make(chan struct{})
	t.leaving[uid] = seen
	return seen
}

func (t *tap) stopExpecting(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.leaving, uid)
}

// saw marks the awaited pods a watch event (one JSON line) shows
// terminating or deleted.
func (t *tap) saw(event []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for uid, seen := range t.leaving {
		if !bytes.Contains(event, []byte(`"uid":"`+string(uid)+`"`)) {
			continue
		}
		if bytes.Contains(event, []byte(`"deletionTimestamp"`)) || bytes.HasPrefix(event, []byte(`{"type":"DELETED"`)) {
			close(seen)
			delete(t.leaving, uid)
		}
	}
}

// awaitLeaving returns once the descheduler's pod watches have passed on
// the evicted pod as terminating, with the pause vanish also takes for
// the informers' index, so the cycle's later plugins do not count the pod
// (one was seen evicting a second pod as its "duplicate"); a dry run gets
// the same from vanish. It waits at most leavingTimeout.
func (t *tap) awaitLeaving(uid types.UID, seen <-chan struct{}) {
	select {
	case <-seen:
		time.Sleep(indexHandOff)
	case <-time.After(leavingTimeout):
		t.stopExpecting(uid)
	}
}

// leavingTimeout bounds awaitLeaving: a pod no watch of the descheduler
// covers never shows up there.
const leavingTimeout = 5 * time.Second

// indexHandOff is the pause vanish allows an informer to move a queued
// deletion into its index.
const indexHandOff = 50 * time.Millisecond

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

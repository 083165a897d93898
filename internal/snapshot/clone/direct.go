package clone

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/snapshot"
	"github.com/kubesim/kubesim/internal/snapshot/etcdpods"
	"github.com/kubesim/kubesim/internal/stage"
)

// Direct loads the pods bound to the clone's nodes straight into etcd,
// each Running as the simulator's stages make it (kubeletsim.Starter),
// in one write (etcdpods): a create and a status patch through the API
// server cost the API server, etcd and every watcher twice, the patch
// the dearer. A pod that the API server's admission or the simulator
// would treat otherwise goes through the API server, as do pods the
// simulator does not run (unbound, or on a node not cloned).
type Direct struct {
	Store *etcdpods.Store
	// StageSet is the cluster's built-in stage set; the cluster's Stage
	// objects are laid over it, as the simulator does.
	StageSet string
	// NodesWait bounds the wait for the simulator to give the cloned
	// nodes their addresses, which the pods' status names.
	NodesWait time.Duration
}

// errNotDirect says why no pod goes straight into etcd after all.
type errNotDirect struct{ why string }

func (e errNotDirect) Error() string { return e.why }

// isNotDirect reports whether err only says the pods go through the API
// server after all.
func isNotDirect(err error) bool {
	var e errNotDirect
	return errors.As(err, &e)
}

// direct is what loading pods straight into etcd needs, found once per
// clone when its first pods come: every run of pods shares the Starter,
// so no address is handed out twice.
type direct struct {
	starter   *kubeletsim.Starter
	nodes     map[string]bool
	admission *admitted
}

// podToWrite is a pod on its way into etcd.
type podToWrite struct {
	obj     *unstructured.Unstructured // as in the snapshot
	pod     *corev1.Pod                // repointed, then as stored
	dropped int                        // owner references repoint dropped
	value   []byte
	why     string // if set, the pod goes through the API server: why
}

// createPodsDirect loads pods bound to cloned nodes into etcd and returns
// the others, for the API server, saying why the first of them goes
// there. errNotDirect: none goes into etcd.
func (l *loader) createPodsDirect(ctx context.Context, objects []*unstructured.Unstructured) (rest []*unstructured.Unstructured, err error) {
	if l.direct == nil {
		if l.direct, err = l.prepareDirect(ctx, objects); err != nil {
			return objects, err
		}
	}
	var pods []*podToWrite
	for _, obj := range objects {
		if l.direct.nodes[nestedNodeName(obj)] {
			pods = append(pods, &podToWrite{obj: obj})
		} else {
			rest = append(rest, obj)
		}
	}
	if err := l.preparePods(ctx, pods); err != nil {
		return objects, err
	}
	var written []*podToWrite
	example := ""
	for _, p := range pods {
		if p.why == "" {
			written = append(written, p)
			continue
		}
		if example == "" {
			example = fmt.Sprintf("pod %s: %s", snapshot.Name(p.obj), p.why)
		}
		rest = append(rest, p.obj)
	}
	if example != "" {
		l.note("%d of %d pods are created through the API server, not written straight into etcd (%s)", len(pods)-len(written), len(pods), example)
	}
	return rest, l.writePods(ctx, written, len(objects))
}

// prepareDirect waits until the simulator has given the nodes the pods
// are bound to their addresses, and lists what admission would look at.
func (l *loader) prepareDirect(ctx context.Context, pods []*unstructured.Unstructured) (*direct, error) {
	stages, err := l.stages(ctx)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, obj := range pods {
		if name := nestedNodeName(obj); name != "" {
			want[name] = true
		}
	}
	deadline := time.Now().Add(l.o.Direct.NodesWait)
	for {
		list, err := l.typed.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the clone's nodes: %w", err)
		}
		d := &direct{nodes: map[string]bool{}}
		nodes, waiting := make([]*corev1.Node, 0, len(list.Items)), ""
		for i := range list.Items {
			n := &list.Items[i]
			d.nodes[n.Name] = true
			nodes = append(nodes, n)
			if want[n.Name] && waiting == "" && !hasInternalIP(n) {
				waiting = n.Name
			}
		}
		if waiting == "" {
			d.starter = kubeletsim.NewStarter(stages, nodes)
			d.admission, err = listAdmission(ctx, l.typed, nodes)
			return d, err
		}
		if time.Now().After(deadline) {
			return nil, errNotDirect{fmt.Sprintf("node %s has no address from the simulator after %s", waiting, l.o.Direct.NodesWait)}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// preparePods makes each pod what a create and then the simulator's
// status write make of it, or says why it goes through the API server.
// Many at once: this is work the API server would otherwise do, twice.
// An invalid pod is the clone's error, as its create would be.
func (l *loader) preparePods(ctx context.Context, pods []*podToWrite) error {
	now := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(Workers)
	for _, p := range pods {
		g.Go(func() (err error) {
			defer func() {
				if r := recover(); r != nil { // one pod must not take the clone down
					p.why = fmt.Sprintf("panic: %v", r)
				}
			}()
			if gctx.Err() != nil {
				return nil
			}
			return l.preparePod(p, now)
		})
	}
	return g.Wait()
}

func (l *loader) preparePod(p *podToWrite, now time.Time) error {
	copied := p.obj.DeepCopy()
	l.mu.Lock()
	p.dropped = l.repoint(copied)
	l.mu.Unlock()
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(copied.Object, pod); err != nil {
		return fmt.Errorf("Pod %s: %w", snapshot.Name(p.obj), err)
	}
	if pod.Name == "" {
		p.why = "it has no name (the API server generates one)"
		return nil
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		p.why = "it has ResourceClaims (the simulator starts it once they are reserved for it)"
		return nil
	}
	if p.why = l.direct.admission.why(pod); p.why != "" {
		return nil
	}
	made, err := etcdpods.Prepare(pod)
	if err != nil {
		return fmt.Errorf("creating Pod %s: %s", snapshot.Name(p.obj), oneLine(err))
	}
	running := made.DeepCopy()
	if err := l.direct.starter.Start(running, now); err != nil {
		p.why = err.Error()
		return nil
	}
	if p.pod, err = etcdpods.UpdateStatus(made, running); err != nil {
		p.why = "its status as the simulator's stages make it: " + oneLine(err)
		return nil
	}
	if p.value, err = l.o.Direct.Store.Encode(p.pod); err != nil {
		return fmt.Errorf("Pod %s: %w", snapshot.Name(p.obj), err)
	}
	return nil
}

// writePods writes the prepared pods, a transaction of many at a time,
// a few transactions at once, and records them as made.
func (l *loader) writePods(ctx context.Context, pods []*podToWrite, total int) error {
	var mu sync.Mutex
	done := 0
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for start := 0; start < len(pods); start += etcdpods.BatchOps {
		batch := pods[start:min(start+etcdpods.BatchOps, len(pods))]
		g.Go(func() error {
			keys, values := make([]string, len(batch)), make([][]byte, len(batch))
			for i, p := range batch {
				keys[i], values[i] = etcdpods.Key(p.pod), p.value
			}
			existing, err := l.o.Direct.Store.Create(gctx, keys, values)
			if err != nil {
				return fmt.Errorf("writing pods %s…: %w", snapshot.Name(batch[0].obj), err)
			}
			l.mu.Lock()
			for i, p := range batch {
				if existing[i] {
					l.result.Existing["Pod"]++
					continue
				}
				if source := p.obj.GetAnnotations()[snapshot.SourceUIDAnnotation]; source != "" {
					l.uids[source] = string(p.pod.UID)
				}
				l.result.Created["Pod"]++
				l.result.DroppedOwners += p.dropped
			}
			l.mu.Unlock()
			mu.Lock()
			done += len(batch)
			l.progress("Pod", done, total)
			mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// stages are the simulator's: the built-in set with the cluster's Stage
// objects laid over it, those that do not compile left out as the
// simulator leaves them out.
func (l *loader) stages(ctx context.Context) ([]*stage.Stage, error) {
	builtin, err := stage.Builtin(l.o.Direct.StageSet)
	if err != nil {
		return nil, err
	}
	list, err := l.client.Resource(kwokv1alpha1.StagesResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the clone's Stages: %w", err)
	}
	var user []*stage.Stage
	for i := range list.Items {
		if s, err := kubeletsim.CompileStage(&list.Items[i]); err == nil {
			user = append(user, s)
		}
	}
	return stage.Merge(builtin, user), nil
}

func nestedNodeName(obj *unstructured.Unstructured) string {
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName")
	return name
}

func hasInternalIP(n *corev1.Node) bool {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			return true
		}
	}
	return false
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

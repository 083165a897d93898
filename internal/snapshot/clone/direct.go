package clone

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
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
// the dearer. Pods the simulator does not run (unbound, or on a node not
// cloned) are created through the API server as before.
type Direct struct {
	Store *etcdpods.Store
	// StageSet is the cluster's built-in stage set; the cluster's Stage
	// objects are laid over it, as the simulator does.
	StageSet string
	// NodesWait bounds the wait for the simulator to give the cloned
	// nodes their addresses, which the pods' status names.
	NodesWait time.Duration
}

// errNotDirect says why the pods go through the API server after all.
type errNotDirect struct{ why string }

func (e errNotDirect) Error() string { return e.why }

// createPodsDirect loads pods bound to cloned nodes into etcd and returns
// the others, for the API server. If a bound pod's stages do not make it
// Running at once (a stage with a delay, or one that does more than
// patch the status), every pod is left to the API server and the
// simulator: errNotDirect says why.
func (l *loader) createPodsDirect(ctx context.Context, objects []*unstructured.Unstructured) (rest []*unstructured.Unstructured, err error) {
	starter, nodes, err := l.starter(ctx, objects)
	if err != nil {
		return objects, err
	}
	type prepared struct {
		source string // uid in the source
		pod    *corev1.Pod
		key    string
		value  []byte
	}
	admission, err := listAdmission(ctx, l.typed)
	if err != nil {
		return objects, err
	}
	var bound []*prepared
	dropped, admitting := 0, ""
	for _, obj := range objects {
		if !nodes[nestedNodeName(obj)] {
			rest = append(rest, obj)
			continue
		}
		copied := obj.DeepCopy()
		l.mu.Lock()
		d := l.repoint(copied) // counted if the pod is made here
		l.mu.Unlock()
		pod := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(copied.Object, pod); err != nil {
			return objects, fmt.Errorf("Pod %s: %w", snapshot.Name(obj), err)
		}
		if why := admission.why(pod); why != "" {
			admitting = fmt.Sprintf("pod %s/%s: %s", pod.Namespace, pod.Name, why)
			rest = append(rest, obj)
			continue
		}
		dropped += d
		bound = append(bound, &prepared{source: obj.GetAnnotations()[snapshot.SourceUIDAnnotation], pod: pod})
	}
	// Prepared and rendered many at once: this is the CPU the API server
	// would otherwise spend, twice over.
	now := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(Workers)
	var refused atomic.Pointer[errNotDirect]
	for _, p := range bound {
		g.Go(func() error {
			if gctx.Err() != nil || refused.Load() != nil {
				return nil
			}
			name := p.pod.Namespace + "/" + p.pod.Name
			made, err := etcdpods.Prepare(p.pod)
			if err != nil {
				return fmt.Errorf("creating Pod %s: %s", name, oneLine(err))
			}
			running := made.DeepCopy()
			if err := starter.Start(running, now); err != nil {
				refused.CompareAndSwap(nil, &errNotDirect{fmt.Sprintf("pod %s: %v", name, err)})
				return nil
			}
			if p.pod, err = etcdpods.UpdateStatus(made, running); err != nil {
				return fmt.Errorf("Pod %s: its status as the simulator's stages make it: %s", name, oneLine(err))
			}
			p.key = etcdpods.Key(p.pod)
			p.value, err = l.o.Direct.Store.Encode(p.pod)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return objects, err
	}
	if why := refused.Load(); why != nil {
		return objects, *why
	}
	l.mu.Lock()
	l.result.DroppedOwners += dropped
	l.mu.Unlock()
	if admitting != "" {
		l.note("Some pods go through the API server, whose admission decides (%s)", admitting)
	}
	var done atomic.Int64
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(4) // etcd takes a transaction's pods in one write
	const chunk = 100
	for start := 0; start < len(bound); start += chunk {
		batch := bound[start:min(start+chunk, len(bound))]
		g.Go(func() error {
			keys, values := make([]string, len(batch)), make([][]byte, len(batch))
			for i, p := range batch {
				keys[i], values[i] = p.key, p.value
			}
			existing, err := l.o.Direct.Store.Create(gctx, keys, values)
			if err != nil {
				return err
			}
			l.mu.Lock()
			for i, p := range batch {
				if existing[i] {
					l.result.Existing["Pod"]++
					continue
				}
				if p.source != "" {
					l.uids[p.source] = string(p.pod.UID)
				}
				l.result.Created["Pod"]++
			}
			l.mu.Unlock()
			l.progress("Pod", int(done.Add(int64(len(batch)))), len(objects))
			return nil
		})
	}
	return rest, g.Wait()
}

// starter waits until the simulator has given the nodes the pods are
// bound to their addresses, and renders the cluster's pod stages with
// them. nodes are the names of the cluster's nodes.
func (l *loader) starter(ctx context.Context, pods []*unstructured.Unstructured) (*kubeletsim.Starter, map[string]bool, error) {
	stages, err := l.stages(ctx)
	if err != nil {
		return nil, nil, err
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
			return nil, nil, err
		}
		names, waiting := map[string]bool{}, ""
		var nodes []*corev1.Node
		for i := range list.Items {
			n := &list.Items[i]
			names[n.Name] = true
			nodes = append(nodes, n)
			if want[n.Name] && waiting == "" && !hasInternalIP(n) {
				waiting = n.Name
			}
		}
		if waiting == "" {
			return kubeletsim.NewStarter(stages, nodes), names, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, errNotDirect{fmt.Sprintf("node %s has no address from the simulator after %s", waiting, l.o.Direct.NodesWait)}
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stages are the simulator's: the built-in set with the cluster's Stage
// objects laid over it. A Stage that does not compile (the simulator
// leaves it out and says so) leaves the pods to the simulator.
func (l *loader) stages(ctx context.Context) ([]*stage.Stage, error) {
	builtin, err := stage.Builtin(l.o.Direct.StageSet)
	if err != nil {
		return nil, err
	}
	list, err := l.client.Resource(kwokv1alpha1.StagesResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var user []*stage.Stage
	for _, item := range list.Items {
		s := &kwokv1alpha1.Stage{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, s); err != nil {
			return nil, errNotDirect{fmt.Sprintf("Stage %s: %v", item.GetName(), err)}
		}
		c, err := stage.Compile(s)
		if err != nil {
			return nil, errNotDirect{fmt.Sprintf("Stage %s: %v", item.GetName(), err)}
		}
		c.Revision = item.GetResourceVersion()
		user = append(user, c)
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

// isNotDirect reports whether err only says the pods go through the API
// server after all.
func isNotDirect(err error) bool {
	var e errNotDirect
	return errors.As(err, &e)
}

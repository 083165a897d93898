package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-base/version"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/scale"
	"github.com/kubesim/kubesim/internal/snapshot"
	"github.com/kubesim/kubesim/internal/snapshot/clone"
	"github.com/kubesim/kubesim/internal/snapshot/export"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// createClone makes a cluster a clone of c.From or c.FromContext. The
// source is read first, so a bad one makes nothing. The cluster is made
// with the controller-manager's pod controllers held, the snapshot loaded,
// and only then are they let go (a restart of the cluster): they find each
// workload with its pods, as in the source, and have nothing to create or
// delete. A failure after the cluster was made deletes it, unless Retain.
func (p *Provider) createClone(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) (err error) {
	if c.From != "" && c.FromContext != "" {
		return errors.New("from and fromContext (--from, --from-context): give one source to clone")
	}
	objects, err := p.readCloneSource(ctx, c, opts)
	if err != nil {
		return err
	}
	kcm := controlplane.KubeControllerManager
	given := c.ExtraArgs[kcm]
	c.ExtraArgs = maps.Clone(c.ExtraArgs)
	if c.ExtraArgs == nil {
		c.ExtraArgs = map[string][]string{}
	}
	c.ExtraArgs[kcm] = append(slices.Clone(given), controlplane.ControllersArg(controlplane.PodControllers...))
	if err := p.create(ctx, c, opts); err != nil {
		return err
	}
	defer func() {
		if err != nil && !opts.Retain {
			if rmErr := p.Delete(context.Background(), c.Name); rmErr != nil {
				err = fmt.Errorf("%w (deleting the cluster also failed: %v)", err, rmErr)
			} else {
				err = fmt.Errorf("%w (cluster %q deleted; --retain keeps it)", err, c.Name)
			}
		}
	}()
	cfg, err := p.RESTConfig(c.Name)
	if err != nil {
		return err
	}
	started := time.Now()
	result, err := clone.Load(ctx, cfg, objects, clone.Options{Progress: p.Out, Terminal: opts.Nodes.Terminal})
	if err != nil {
		return fmt.Errorf("cloning into %q: %w", c.Name, err)
	}
	p.logf(" ✓ Cloned in %.1fs: %s", time.Since(started).Seconds(), result.Summary())
	if err := p.releasePodControllers(ctx, c.Name, given, opts); err != nil {
		return err
	}
	client, err := p.Client(c.Name)
	if err != nil {
		return err
	}
	return waitCloned(ctx, client, objects, opts.Wait, p.logf)
}

// readCloneSource reads the snapshot file, or exports the context's
// cluster in memory.
func (p *Provider) readCloneSource(ctx context.Context, c *v1alpha1.Cluster, opts CreateOptions) ([]*unstructured.Unstructured, error) {
	if c.FromContext != "" {
		cfg, err := export.SourceConfig(p.Kubeconfig, c.FromContext)
		if err != nil {
			return nil, err
		}
		r, err := export.Export(ctx, export.Options{Config: cfg, Source: c.FromContext, Progress: p.Out, Terminal: opts.Nodes.Terminal})
		if err != nil {
			return nil, err
		}
		for _, line := range r.Summary() {
			p.logf("%s", line)
		}
		return r.Objects, nil
	}
	f, err := os.Open(c.From)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("--from: %w", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, objects, err := snapshot.Read(f)
	if err == nil {
		err = snapshot.CheckVersion(h, version.Get().GitVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", c.From, err)
	}
	p.logf("Cloning %s (%s, Kubernetes %s, exported %s): %s", c.From, h.Source, h.Kubernetes, h.Exported.Format(time.RFC3339), snapshot.Summary(h.Counts))
	return objects, nil
}

// releasePodControllers restarts the cluster with the controller-manager's
// arguments as the user gave them: its pod controllers then run.
func (p *Provider) releasePodControllers(ctx context.Context, name string, given []string, opts CreateOptions) error {
	started := time.Now()
	return p.operate(ctx, name, func(clusterdir.Dir) error {
		d, c, err := p.open(name)
		if err != nil {
			return err
		}
		if err := supervisor.Stop(ctx, d, func(string, ...any) {}); err != nil {
			return err
		}
		if len(given) == 0 {
			delete(c.ExtraArgs, controlplane.KubeControllerManager)
		} else {
			c.ExtraArgs[controlplane.KubeControllerManager] = given
		}
		if len(c.ExtraArgs) == 0 {
			c.ExtraArgs = nil
		}
		if err := d.Save(c); err != nil {
			return err
		}
		if err := supervisor.Launch(ctx, p.Home, d, opts.Wait); err != nil {
			return err
		}
		p.logf(" ✓ Controllers started on the cloned objects (%.1fs)", time.Since(started).Seconds())
		return nil
	})
}

// waitCloned waits until the cloned nodes are Ready and the cloned pods
// Running, saying how far it got if they are not within wait. It counts
// from a watch, not by listing again and again: at 20,000 pods each list
// would cost the API server more than the clone's own writes.
func waitCloned(ctx context.Context, client kubernetes.Interface, objects []*unstructured.Unstructured, wait time.Duration, logf func(string, ...any)) error {
	nodes, pods := map[string]bool{}, map[string]bool{}
	for _, obj := range objects {
		switch obj.GetKind() {
		case "Node":
			nodes[obj.GetName()] = true
		case "Pod":
			pods[snapshot.Name(obj)] = true
		}
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	nodeLister, podLister := factory.Core().V1().Nodes().Lister(), factory.Core().V1().Pods().Lister()
	watching, stop := context.WithCancel(ctx)
	factory.Start(watching.Done())
	defer func() { stop(); factory.Shutdown() }()
	started := time.Now()
	for {
		ready, running := countCloned(nodeLister, podLister, nodes, pods)
		if ready == len(nodes) && running == len(pods) {
			logf(" ✓ %d nodes Ready, %d pods Running (%.1fs)", ready, running, time.Since(started).Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d cloned nodes Ready and %d of %d cloned pods Running after %s; see kubesim logs kubelet-sim", ready, len(nodes), running, len(pods), wait)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// countCloned counts the cloned nodes that are Ready and the cloned pods
// that are Running (or, a Job's, finished meanwhile).
func countCloned(nodeLister corelisters.NodeLister, podLister corelisters.PodLister, nodes, pods map[string]bool) (ready, running int) {
	all, _ := nodeLister.List(labels.Everything())
	for _, node := range all {
		if nodes[node.Name] && scale.IsReady(node) {
			ready++
		}
	}
	allPods, _ := podLister.List(labels.Everything())
	for _, pod := range allPods {
		done := pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded
		if pods[pod.Namespace+"/"+pod.Name] && done {
			running++
		}
	}
	return ready, running
}

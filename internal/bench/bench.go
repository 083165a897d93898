// Package bench measures kubesim on the machine it runs on: how long
// simulated nodes and pods take to come and go, and what each component
// of the cluster spends on it.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Namespace holds the benchmark's pods.
const Namespace = "default"

// workers is how many API calls the load generator makes at once.
const workers = 64

// clusterWait bounds how long a throwaway cluster may take to be ready.
const clusterWait = 3 * time.Minute

// Cluster is a throwaway cluster to measure, with its own kubeconfig so
// the user's is never touched.
type Cluster struct {
	Name    string
	Client  kubernetes.Interface
	dir     string
	p       *cluster.Provider
	cleanup func()
}

// NewCluster creates a cluster named cfg.Name from cfg under home.
func NewCluster(ctx context.Context, home string, cfg *v1alpha1.Cluster, log io.Writer) (*Cluster, error) {
	p, cleanup, err := throwawayProvider(home, log)
	if err != nil {
		return nil, err
	}
	if err := p.Create(ctx, cfg, cluster.CreateOptions{Wait: clusterWait}); err != nil {
		cleanup()
		return nil, err
	}
	client, err := p.Client(cfg.Name)
	if err != nil {
		_ = p.Delete(ctx, cfg.Name)
		cleanup()
		return nil, err
	}
	return &Cluster{Name: cfg.Name, Client: client, dir: clusterdir.For(home, cfg.Name).Path, p: p, cleanup: cleanup}, nil
}

// Delete removes the cluster.
func (c *Cluster) Delete(ctx context.Context) error {
	defer c.cleanup()
	return c.p.Delete(ctx, c.Name)
}

// throwawayProvider manages clusters under home with a kubeconfig of its
// own: benchmarking must not touch the user's. cleanup removes it.
func throwawayProvider(home string, log io.Writer) (p *cluster.Provider, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "kubesim-bench-")
	if err != nil {
		return nil, nil, err
	}
	p = &cluster.Provider{Home: home, Kubeconfig: filepath.Join(tmp, "kubeconfig"), Out: log}
	return p, func() { os.RemoveAll(tmp) }, nil
}

// Phase is one measured step.
type Phase struct {
	Name  string
	Count int // objects the step handled
	Took  time.Duration
	CPU   map[string]time.Duration // per component, during the step
	RSS   map[string]int64         // per component, at the end
	// Peak is each component's highest RSS so far (its processes' VmHWM):
	// their sum bounds the cluster's peak from above.
	Peak map[string]int64
	// FloorOf names the floor's phase that does the writes this phase
	// cannot do without, for the same objects: the least it can take.
	FloorOf string
}

// Measure runs step and records its time and each component's usage.
func (c *Cluster) Measure(name string, count int, step func() error) (Phase, error) {
	before := componentUsage(c.dir)
	start := time.Now()
	if err := step(); err != nil {
		return Phase{}, fmt.Errorf("%s: %w", name, err)
	}
	took := time.Since(start)
	after := componentUsage(c.dir)
	rss, peak := map[string]int64{}, map[string]int64{}
	for n, u := range after {
		rss[n], peak[n] = u.rss, u.peak
	}
	return Phase{Name: name, Count: count, Took: took, CPU: cpuSince(before, after), RSS: rss, Peak: peak}, nil
}

// Report prints phases: time, rate, how many times its floor's time a
// phase took (if floor, measured in the same run, has that phase), and
// CPU seconds and RSS per component.
func Report(w io.Writer, phases, floor []Phase) {
	for _, p := range phases {
		rate := float64(p.Count) / p.Took.Seconds()
		fmt.Fprintf(w, "%s: %d in %.2fs (%.0f/s)\n", p.Name, p.Count, p.Took.Seconds(), rate)
		if f, ok := floorFor(p, floor); ok {
			fmt.Fprintf(w, "  %.2f× the floor (%s: %d in %.2fs)\n", p.Took.Seconds()/f.Took.Seconds(), f.Name, f.Count, f.Took.Seconds())
		}
		var names []string
		var total time.Duration
		for n, cpu := range p.CPU {
			names = append(names, n)
			total += cpu
		}
		sort.Slice(names, func(i, j int) bool { return p.CPU[names[i]] > p.CPU[names[j]] })
		fmt.Fprintf(w, "  %-24s %9s %7s %9s %9s\n", "component", "CPU-s", "share", "RSS", "peak RSS")
		var rss, peak int64
		for _, n := range names {
			share := 0.0
			if total > 0 {
				share = 100 * p.CPU[n].Seconds() / total.Seconds()
			}
			fmt.Fprintf(w, "  %-24s %9.1f %6.1f%% %7dMi %7dMi\n", n, p.CPU[n].Seconds(), share, p.RSS[n]>>20, p.Peak[n]>>20)
			rss, peak = rss+p.RSS[n], peak+p.Peak[n]
		}
		fmt.Fprintf(w, "  %-24s %9.1f %7s %7dMi %7dMi\n", "total", total.Seconds(), "", rss>>20, peak>>20)
	}
}

// floorFor is the phase of floor that p names as its floor, if it handled
// as many objects.
func floorFor(p Phase, floor []Phase) (Phase, bool) {
	for _, f := range floor {
		if p.FloorOf != "" && f.Name == p.FloorOf && f.Count == p.Count && f.Took > 0 {
			return f, true
		}
	}
	return Phase{}, false
}

// podCounter watches the benchmark's pods and counts them by state.
type podCounter struct {
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc
	lister  func() []*corev1.Pod
}

func newPodCounter(ctx context.Context, client kubernetes.Interface) *podCounter {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(Namespace))
	lister := f.Core().V1().Pods().Lister()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return &podCounter{factory: f, cancel: cancel, lister: func() []*corev1.Pod {
		pods, _ := lister.Pods(Namespace).List(labels.Everything())
		return pods
	}}
}

func (pc *podCounter) stop() {
	pc.cancel()
	pc.factory.Shutdown()
}

// waitFor polls count until it reports done or timeout passes.
func (pc *podCounter) waitFor(ctx context.Context, timeout time.Duration, what string, done func([]*corev1.Pod) (int, bool)) error {
	deadline := time.Now().Add(timeout)
	for {
		n, ok := done(pc.lister())
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: only %d after %s", what, n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func running(n int) func([]*corev1.Pod) (int, bool) {
	return func(pods []*corev1.Pod) (int, bool) {
		c := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				c++
			}
		}
		return c, c >= n
	}
}

func gone(pods []*corev1.Pod) (int, bool) { return len(pods), len(pods) == 0 }

func benchPod(name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

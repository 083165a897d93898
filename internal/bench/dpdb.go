package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
	"github.com/kubesim/kubesim/internal/dpdb"
	"github.com/kubesim/kubesim/internal/scale"
)

// DPDBResult is what `kubesim bench dpdb` measured.
type DPDBResult struct {
	Pairs int
	// BothWithout and BothWith count pairs whose two simultaneous
	// evictions both succeeded, without and with the eviction webhook.
	BothWithout, BothWith int
	// LatencyWithout and LatencyWith are the admitted evictions' latencies.
	LatencyWithout, LatencyWith []time.Duration
	// Lag is, without the webhook, from an eviction in one cluster until
	// the neighbour's child PDB in the other shows 0 allowed.
	Lag []time.Duration
}

// dpdbBench is two federated clusters, a and b, each with one pod per
// pair whose DPDB (minAvailable 1) federates its twin in the other
// cluster: of each pair only one pod may go.
type dpdbBench struct {
	a, b     *Cluster
	dynA     dynamic.Interface
	dynB     dynamic.Interface
	pairs    int
	webhooks map[*Cluster]*admissionregistrationv1.ValidatingWebhookConfiguration
}

// DPDB runs the benchmark of distributed PodDisruptionBudgets with pairs
// pairs in two throwaway clusters, and prints its table to out.
func DPDB(ctx context.Context, home string, pairs int, out, log io.Writer) error {
	if pairs < 1 {
		return fmt.Errorf("--pairs: must be at least 1, got %d", pairs)
	}
	bn := &dpdbBench{pairs: pairs, webhooks: map[*Cluster]*admissionregistrationv1.ValidatingWebhookConfiguration{}}
	for _, side := range []**Cluster{&bn.a, &bn.b} {
		name := fmt.Sprintf("dpdb-bench-%d-%c", os.Getpid(), 'a'+len(bn.webhooks))
		c, err := NewCluster(ctx, home, &v1alpha1.Cluster{Name: name}, io.Discard)
		if err != nil {
			return err
		}
		defer c.Delete(context.Background())
		*side = c
		bn.webhooks[c] = nil
		if err := scale.Nodes(ctx, c.Client, scale.Options{Replicas: 1, Template: scale.DefaultTemplate(), Wait: time.Minute}); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	if err := bn.a.p.Federate(ctx, []string{bn.a.Name, bn.b.Name}); err != nil {
		return err
	}
	var err error
	if bn.dynA, err = bn.dynamic(bn.a); err != nil {
		return err
	}
	if bn.dynB, err = bn.dynamic(bn.b); err != nil {
		return err
	}
	for c := range bn.webhooks {
		if bn.webhooks[c], err = c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, dpdb.WebhookName, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("cluster %s: the dpdb webhook: %w", c.Name, err)
		}
	}
	fmt.Fprintf(log, "Setting up %d pairs in %s and %s\n", pairs, bn.a.Name, bn.b.Name)
	if err := bn.setUp(ctx); err != nil {
		return err
	}
	res := DPDBResult{Pairs: pairs}
	fmt.Fprintln(log, "Simultaneous evictions with the webhook")
	if res.BothWith, res.LatencyWith, err = bn.race(ctx); err != nil {
		return err
	}
	if err := bn.removeWebhook(ctx); err != nil {
		return err
	}
	fmt.Fprintln(log, "Simultaneous evictions without the webhook")
	if res.BothWithout, res.LatencyWithout, err = bn.race(ctx); err != nil {
		return err
	}
	fmt.Fprintln(log, "Propagation lag without the webhook")
	if res.Lag, err = bn.lag(ctx); err != nil {
		return err
	}
	PrintDPDB(out, res)
	return nil
}

func (bn *dpdbBench) dynamic(c *Cluster) (dynamic.Interface, error) {
	cfg, err := c.p.RESTConfig(c.Name)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

func pairPod(i int) string { return fmt.Sprintf("pair-%04d", i) }

// setUp creates every pair's pods and DPDBs and waits until all allow 1.
func (bn *dpdbBench) setUp(ctx context.Context) error {
	for _, side := range []struct {
		c     *Cluster
		dyn   dynamic.Interface
		other string
	}{{bn.a, bn.dynA, bn.b.Name}, {bn.b, bn.dynB, bn.a.Name}} {
		for i := range bn.pairs {
			if err := createPairPod(ctx, side.c, i); err != nil {
				return err
			}
			d := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": policyv1alpha1.GroupVersion, "kind": policyv1alpha1.Kind,
				"metadata": map[string]any{"name": pairPod(i), "namespace": Namespace},
				"spec": map[string]any{
					"selector":     map[string]any{"matchLabels": map[string]any{"pair": pairPod(i)}},
					"minAvailable": int64(1),
					"federation":   []any{map[string]any{"name": pairPod(i), "cluster": side.other}},
				},
			}}
			if _, err := side.dyn.Resource(policyv1alpha1.Resource).Namespace(Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("cluster %s: DPDB %s: %w", side.c.Name, pairPod(i), err)
			}
		}
	}
	return bn.waitAllAllowed(ctx)
}

func createPairPod(ctx context.Context, c *Cluster, i int) error {
	p := benchPod(pairPod(i), "", map[string]string{"pair": pairPod(i)})
	_, err := c.Client.CoreV1().Pods(Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cluster %s: pod %s: %w", c.Name, p.Name, err)
	}
	return nil
}

// waitAllAllowed waits until every pair's child PDB allows 1 on both sides.
func (bn *dpdbBench) waitAllAllowed(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		for _, c := range []*Cluster{bn.a, bn.b} {
			pdbs, err := c.Client.PolicyV1().PodDisruptionBudgets(Namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			ok := 0
			for _, p := range pdbs.Items {
				if p.Status.DisruptionsAllowed == 1 && p.Status.ObservedGeneration == p.Generation {
					ok++
				}
			}
			if ok < bn.pairs {
				return false, nil
			}
		}
		return true, nil
	})
}

// race evicts both pods of every pair at the same moment; it counts the
// pairs where both went and returns the admitted evictions' latencies,
// then brings the evicted pods back.
func (bn *dpdbBench) race(ctx context.Context) (int, []time.Duration, error) {
	both := 0
	var latencies []time.Duration
	for i := range bn.pairs {
		var wg sync.WaitGroup
		var took [2]time.Duration
		var errs [2]error
		for k, c := range []*Cluster{bn.a, bn.b} {
			wg.Go(func() {
				start := time.Now()
				errs[k] = evictPod(ctx, c, pairPod(i))
				took[k] = time.Since(start)
			})
		}
		wg.Wait()
		for k, err := range errs {
			if err == nil {
				latencies = append(latencies, took[k])
			} else if !apierrors.IsTooManyRequests(err) {
				return 0, nil, fmt.Errorf("evicting %s: %w", pairPod(i), err)
			}
		}
		if errs[0] == nil && errs[1] == nil {
			both++
		}
	}
	return both, latencies, bn.restore(ctx)
}

// lag evicts one pod of every pair and times until the other cluster's
// child PDB of its twin shows 0 allowed.
func (bn *dpdbBench) lag(ctx context.Context) ([]time.Duration, error) {
	zero := make(chan string, 4*bn.pairs)
	factory := informers.NewSharedInformerFactoryWithOptions(bn.b.Client, 0, informers.WithNamespace(Namespace))
	inf := factory.Policy().V1().PodDisruptionBudgets().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		if p, ok := obj.(*policyv1.PodDisruptionBudget); ok && p.Status.DisruptionsAllowed == 0 {
			select {
			case zero <- p.Name:
			default: // the pair waited for is never the one dropped: it is read at once
			}
		}
	}})
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	cache.WaitForCacheSync(stop, inf.HasSynced)
	var lags []time.Duration
	for i := range bn.pairs {
		start := time.Now()
		if err := evictPod(ctx, bn.a, pairPod(i)); err != nil {
			return nil, fmt.Errorf("evicting %s: %w", pairPod(i), err)
		}
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case name := <-zero:
				if name == pairPod(i) {
					lags = append(lags, time.Since(start))
					break wait
				}
			case <-timeout:
				return nil, fmt.Errorf("%s in %s never showed 0 allowed", pairPod(i), bn.b.Name)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return lags, nil
}

// restore recreates the evicted pods and waits until every budget is 1.
func (bn *dpdbBench) restore(ctx context.Context) error {
	for _, c := range []*Cluster{bn.a, bn.b} {
		for i := range bn.pairs {
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				p, err := c.Client.CoreV1().Pods(Namespace).Get(ctx, pairPod(i), metav1.GetOptions{})
				return err == nil && p.DeletionTimestamp == nil || apierrors.IsNotFound(err), nil
			})
			if err != nil {
				return err
			}
			if err := createPairPod(ctx, c, i); err != nil {
				return err
			}
		}
	}
	return bn.waitAllAllowed(ctx)
}

// removeWebhook removes the eviction webhook from both clusters, leaving
// the child PDBs alone to keep the budgets.
func (bn *dpdbBench) removeWebhook(ctx context.Context) error {
	for c, cfg := range bn.webhooks {
		err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, cfg.Name, metav1.DeleteOptions{})
		if err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

func evictPod(ctx context.Context, c *Cluster, name string) error {
	return c.Client.PolicyV1().Evictions(Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: name, Namespace: Namespace},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
	})
}

// PrintDPDB prints the benchmark's table.
func PrintDPDB(w io.Writer, r DPDBResult) {
	fmt.Fprintf(w, "pairs of simultaneous neighbour evictions that both succeeded: %d of %d without the webhook, %d of %d with it\n",
		r.BothWithout, r.Pairs, r.BothWith, r.Pairs)
	p50w, p99w := percentiles(r.LatencyWith)
	p50o, p99o := percentiles(r.LatencyWithout)
	fmt.Fprintf(w, "admitted eviction latency: p50 %s p99 %s with the webhook, p50 %s p99 %s without (lock adds p50 %s)\n",
		p50w, p99w, p50o, p99o, (p50w - p50o).Round(time.Millisecond))
	p50, p99 := percentiles(r.Lag)
	fmt.Fprintf(w, "propagation lag without the webhook (eviction until the neighbour's child PDB shows 0): p50 %s p99 %s over %d\n",
		p50, p99, len(r.Lag))
}

// percentiles are the p50 and p99 of ds (nearest rank), rounded to 0.1ms.
func percentiles(ds []time.Duration) (time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))].Round(100 * time.Microsecond)
	}
	return rank(0.50), rank(0.99)
}

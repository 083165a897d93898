package scenario

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/explain"
	"github.com/kubesim/kubesim/internal/scale"
)

// target is one cluster a scenario runs on, with its clients and what
// the last drain, evict or deschedule did on it.
type target struct {
	spec     *v1alpha1.ScenarioCluster
	name     string // the kubesim cluster's name
	made     bool   // made by this run, deleted after it
	cfg      *rest.Config
	client   kubernetes.Interface
	dynamic  dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	factory  informers.SharedInformerFactory
	changed  chan struct{} // a pod or node changed
	last     *disruption
	evicted  map[string]bool // pods evicted in this run, for the pictures
	stopInfo context.CancelFunc
	// clusters maps each scenario cluster's name to its kubesim cluster's,
	// for DPDB federation entries.
	clusters map[string]string
	// watched are the kinds beyond pods, nodes, PDBs and Deployments a
	// wait has made it watch (DPDBs, Kueue's Workloads): once each.
	watchedMu sync.Mutex
	watched   map[schema.GroupVersionResource]bool
	// explainer asks the scheduler why pods are Pending; nil in a
	// cluster that records nothing.
	explainer *explain.Client
	// hpas samples the cluster's HorizontalPodAutoscalers for the report.
	hpas hpaSamples
	// queues samples Kueue's ClusterQueues, in a cluster running Kueue.
	queues queueSamples
	// fleet records its nodes and Pending pods as they change; run is the
	// scenario's run, whose steps windows start at.
	fleet *fleet
	run   *runner
}

// disruption is what the last drain, evict or deschedule asked for.
type disruption struct {
	What    string
	Made    []string
	Refused []string
}

// notInName matches what a cluster name (a DNS label) cannot hold.
var notInName = regexp.MustCompile(`[^a-z0-9-]+`)

// clusterName is a fresh cluster's name: the scenario's, shortened, and
// a random suffix, so runs never collide.
func clusterName(scenario, key string) string {
	s := strings.Trim(notInName.ReplaceAllString(strings.ToLower(scenario+"-"+key), "-"), "-")
	// Short: the cluster's unix sockets live under its directory.
	if len(s) > 10 {
		s = strings.Trim(s[:10], "-")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "scn-" + s + "-" + hex.EncodeToString(b)
}

// setUp makes (or opens) a scenario cluster and its nodes.
func setUp(ctx context.Context, p *cluster.Provider, spec *v1alpha1.ScenarioCluster, scenario string) (*target, error) {
	t := &target{spec: spec, name: spec.Existing}
	if t.name == "" {
		t.name = clusterName(scenario, spec.Name)
		c := ClusterConfig(spec, t.name)
		// A create that fails removes what it made.
		if err := p.Create(ctx, c, cluster.CreateOptions{Wait: 3 * time.Minute}); err != nil {
			return t, fmt.Errorf("creating cluster %s: %w", t.name, err)
		}
		t.made = true
	}
	cfg, err := p.RESTConfig(t.name)
	if err != nil {
		return t, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	realHandshake(cfg)
	t.cfg = cfg
	if t.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return t, err
	}
	if t.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return t, err
	}
	t.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(t.client.Discovery()))
	t.evicted = map[string]bool{}
	t.explainer, _, _ = p.Explainer(t.name) // without it, reports only lack the explanations
	t.startInformers()
	if err := t.makeNodes(ctx); err != nil {
		return t, err
	}
	return t, nil
}

// startInformers watches pods and nodes, so waits wake on a change
// rather than poll.
func (t *target) startInformers() {
	ctx, cancel := context.WithCancel(context.Background())
	t.stopInfo = cancel
	t.changed = make(chan struct{}, 1)
	t.factory = informers.NewSharedInformerFactory(t.client, 0)
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { t.notify() },
		UpdateFunc: func(any, any) { t.notify() },
		DeleteFunc: func(any) { t.notify() },
	}
	_, _ = t.factory.Core().V1().Pods().Informer().AddEventHandler(notify)
	_, _ = t.factory.Core().V1().Nodes().Informer().AddEventHandler(notify)
	_, _ = t.factory.Policy().V1().PodDisruptionBudgets().Informer().AddEventHandler(notify)
	_, _ = t.factory.Apps().V1().Deployments().Informer().AddEventHandler(notify)
	_, _ = t.factory.Autoscaling().V2().HorizontalPodAutoscalers().Informer().AddEventHandler(t.hpas.handler())
	t.fleet = newFleet()
	_, _ = t.factory.Core().V1().Nodes().Informer().AddEventHandler(t.fleet.nodeHandler())
	_, _ = t.factory.Core().V1().Pods().Informer().AddEventHandler(t.fleet.podHandler())
	t.factory.Start(ctx.Done())
	if t.hasKarpenter() {
		stop := t.fleet.watchNodeClaims(t)
		t.stopInfo = func() { stop(); cancel() }
	}
	if t.hasKueue() {
		t.watchResource(clusterQueues, t.queues.handler())
	}
}

// hasKueue: the cluster runs Kueue (made with the add-on, or an existing
// one serving its ClusterQueues).
func (t *target) hasKueue() bool {
	if slices.Contains(t.spec.Addons, "kueue") || t.spec.KueueConfig != "" {
		return true
	}
	if t.spec.Existing == "" {
		return false
	}
	_, err := t.client.Discovery().ServerResourcesForGroupVersion(clusterQueues.GroupVersion().String())
	return err == nil
}

// hasKarpenter: the cluster runs Karpenter (made so, or an existing one
// serving its NodeClaims).
func (t *target) hasKarpenter() bool {
	if t.spec.Autoscaler.Karpenter != nil {
		return true
	}
	if t.spec.Existing == "" {
		return false
	}
	_, err := t.client.Discovery().ServerResourcesForGroupVersion(nodeClaims.GroupVersion().String())
	return err == nil
}

// watchResource watches a kind a wait must wake on, from the first wait
// on it until the run ends: a cluster without its CRD (DPDBs in one made
// before them, Kueue's Workloads without the add-on) costs nothing
// unless a step waits on it.
func (t *target) watchResource(gvr schema.GroupVersionResource, also ...cache.ResourceEventHandler) {
	t.watchedMu.Lock()
	defer t.watchedMu.Unlock()
	if t.watched[gvr] {
		return
	}
	if t.watched == nil {
		t.watched = map[schema.GroupVersionResource]bool{}
	}
	t.watched[gvr] = true
	f := dynamicinformer.NewDynamicSharedInformerFactory(t.dynamic, 0)
	_, _ = f.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { t.notify() },
		UpdateFunc: func(any, any) { t.notify() },
		DeleteFunc: func(any) { t.notify() },
	})
	for _, h := range also {
		_, _ = f.ForResource(gvr).Informer().AddEventHandler(h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := t.stopInfo
	t.stopInfo = func() { cancel(); f.Shutdown(); stop() }
	f.Start(ctx.Done())
}

func (t *target) notify() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// tearDown stops the watches and deletes a cluster this run made,
// unless keep.
func (t *target) tearDown(p *cluster.Provider, keep bool) error {
	if t.stopInfo != nil {
		t.stopInfo()
		t.factory.Shutdown()
	}
	if !t.made || keep {
		return nil
	}
	return p.Delete(context.Background(), t.name)
}

// makeNodes creates every node group's nodes and waits until they are
// Ready.
func (t *target) makeNodes(ctx context.Context) error {
	var names []string
	for i := range t.spec.NodeGroups {
		g := &t.spec.NodeGroups[i]
		made, err := t.scaleGroup(ctx, g, g.Count)
		if err != nil {
			return err
		}
		names = append(names, made...)
	}
	return t.waitNodesReady(ctx, names, nodesTimeout)
}

// nodesTimeout bounds making a cluster's nodes, and a scale step of a node
// group that gives no timeout.
const nodesTimeout = 3 * time.Minute

// scaleGroup makes the group have count nodes; it returns their names.
func (t *target) scaleGroup(ctx context.Context, g *v1alpha1.NodeGroup, count int) ([]string, error) {
	o, err := scale.GroupOptions(*g)
	if err != nil {
		return nil, err
	}
	o.Replicas = count
	if err := scale.Nodes(ctx, t.client, o); err != nil {
		return nil, fmt.Errorf("making nodes of group %q: %w", g.Name, err)
	}
	names := make([]string, count)
	for i := range count {
		names[i] = g.NodeName(i)
	}
	return names, nil
}

// waitNodesReady waits, watching, until the named nodes are Ready.
func (t *target) waitNodesReady(ctx context.Context, names []string, timeout time.Duration) error {
	lister := t.factory.Core().V1().Nodes().Lister()
	return t.until(ctx, timeout, func() (bool, string) {
		ready := 0
		for _, n := range names {
			node, err := lister.Get(n)
			if err == nil && scale.IsReady(node) {
				ready++
			}
		}
		return ready == len(names), fmt.Sprintf("%d of %d nodes Ready", ready, len(names))
	})
}

// until calls cond at once and again on every watched change (and each
// second, for what is not watched) until it holds or timeout passes.
func (t *target) until(ctx context.Context, timeout time.Duration, cond func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t.factory.WaitForCacheSync(ctx.Done())
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return &timeoutReport{fmt.Sprintf("not after %s: %s", timeout, state)}
		case <-t.changed:
		case <-tick.C:
		}
	}
}

// timeoutReport is a step's own word that its timeout passed, saying what
// it waited for; the runner keeps it (runStep).
type timeoutReport struct{ msg string }

func (e *timeoutReport) Error() string { return e.msg }

// nodes resolves a NodeRef to node names.
func (t *target) nodes(ctx context.Context, ref v1alpha1.NodeRef) ([]string, error) {
	if ref.Selector == "" {
		return ref.Names, nil
	}
	sel, err := labels.Parse(ref.Selector)
	if err != nil {
		return nil, err
	}
	list, err := t.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range list.Items {
		out = append(out, n.Name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no node matches %s", ref.Selector)
	}
	return out, nil
}

// clientHandshake is client-go's TLS handshake timeout (its transports'
// default).
const clientHandshake = 10 * time.Second

// realHandshake gives the run's clients their TLS handshake timeout in
// real time. The run lives on its clusters' clock: at timeScale 60,
// client-go's 10 s is a sixth of a real second, which a busy API server
// misses, and a step fails with "TLS handshake timeout".
func realHandshake(cfg *rest.Config) {
	c := clusterclock.Own()
	if c == nil || c.Scale <= 1 {
		return
	}
	want := clientHandshake * time.Duration(c.Scale)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		// The first wrapper gets the cached transport itself; set once,
		// before the first client uses it.
		if t, ok := rt.(*http.Transport); ok && t.TLSHandshakeTimeout < want {
			t.TLSHandshakeTimeout = want
		}
		return rt
	})
}

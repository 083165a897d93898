package dpdb

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// remotes are the other clusters of the federation, as the federation
// Secret names them: for each, a watch of its PDBs and a probe of its
// reach. Only PDBs are read there, never pods.
type remotes struct {
	opts      Options
	local     kubernetes.Interface
	newClient func(*rest.Config) (kubernetes.Interface, error) // Clients.Member
	onChange  func(m member)                                   // a remote PDB changed
	onReach   func(cluster string)                             // a cluster became reachable or not
	now       func() time.Time

	mu       sync.Mutex
	clusters map[string]*remote
	// secretErr says why the federation Secret could not be read.
	secretErr string
}

type remote struct {
	name       string
	kubeconfig []byte
	client     kubernetes.Interface
	lister     policylisters.PodDisruptionBudgetLister
	synced     cache.InformerSynced
	cancel     context.CancelFunc

	mu        sync.Mutex
	lastReach time.Time // the last successful probe
	lastErr   error
}

// refresh reads the federation Secret and starts, restarts or stops the
// remote watches to match it.
func (r *remotes) refresh(ctx context.Context) {
	secret, err := r.local.CoreV1().Secrets(r.opts.Namespace).Get(ctx, r.opts.FederationSecret, metav1.GetOptions{})
	data := map[string][]byte{}
	secretErr := ""
	switch {
	case apierrors.IsNotFound(err):
		secretErr = fmt.Sprintf("no Secret %s/%s (run kubesim federate)", r.opts.Namespace, r.opts.FederationSecret)
	case err != nil:
		// Keep what runs; the probes say whether it still reaches.
		klog.ErrorS(err, "reading the federation Secret")
		return
	default:
		data = secret.Data
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secretErr = secretErr
	var changed []string
	for name, rc := range r.clusters {
		if kc, ok := data[name]; !ok || !bytes.Equal(kc, rc.kubeconfig) {
			rc.cancel()
			delete(r.clusters, name)
			changed = append(changed, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		if name == r.opts.ClusterName {
			continue
		}
		if _, ok := r.clusters[name]; ok {
			continue
		}
		rc, err := r.start(ctx, name, data[name])
		if err != nil {
			klog.ErrorS(err, "federation Secret entry", "cluster", name)
			rc = &remote{name: name, kubeconfig: data[name], lastErr: err, cancel: func() {}}
		}
		r.clusters[name] = rc
		changed = append(changed, name)
	}
	for _, name := range changed {
		go r.onReach(name)
	}
}

func (r *remotes) start(ctx context.Context, name string, kubeconfig []byte) (*remote, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig for cluster %s in Secret %s/%s: %w", name, r.opts.Namespace, r.opts.FederationSecret, err)
	}
	cfg.Timeout = 5 * time.Second
	client, err := r.newClient(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Policy().V1().PodDisruptionBudgets()
	rc := &remote{name: name, kubeconfig: kubeconfig, client: client, cancel: cancel,
		lister: informer.Lister(), synced: informer.Informer().HasSynced}
	notify := func(obj any) {
		if pdb, ok := toPDB(obj); ok {
			r.onChange(member{Cluster: name, Namespace: pdb.Namespace, Name: pdb.Name})
		}
	}
	_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	})
	factory.Start(ctx.Done())
	go r.probe(ctx, rc)
	return rc, nil
}

// probe checks the cluster's reach every interval; a change of reach
// resyncs the DPDBs that federate it.
func (r *remotes) probe(ctx context.Context, rc *remote) {
	t := time.NewTicker(r.opts.ProbeInterval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, r.opts.ProbeInterval)
		_, err := rc.client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(pctx, metav1.ListOptions{Limit: 1})
		cancel()
		if ctx.Err() != nil {
			return
		}
		rc.mu.Lock()
		was := rc.lastErr == nil && !rc.lastReach.IsZero()
		if err == nil {
			rc.lastReach, rc.lastErr = r.now(), nil
		} else {
			rc.lastErr = err
		}
		is := rc.lastErr == nil
		rc.mu.Unlock()
		if was != is {
			r.onReach(rc.name)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// observe reads a member in another cluster, and when it was known current.
func (r *remotes) observe(m member) (Observation, string, time.Time) {
	r.mu.Lock()
	rc, ok := r.clusters[m.Cluster]
	secretErr := r.secretErr
	r.mu.Unlock()
	if !ok {
		if secretErr != "" {
			return Observation{}, fmt.Sprintf("cluster %s unknown: %s", m.Cluster, secretErr), time.Time{}
		}
		return Observation{}, fmt.Sprintf("cluster %s unknown: Secret %s/%s has no kubeconfig for it (run kubesim federate)",
			m.Cluster, r.opts.Namespace, r.opts.FederationSecret), time.Time{}
	}
	rc.mu.Lock()
	reach, lastErr := rc.lastReach, rc.lastErr
	rc.mu.Unlock()
	if lastErr != nil {
		return Observation{}, fmt.Sprintf("cluster %s unreachable: %v", m.Cluster, lastErr), reach
	}
	if reach.IsZero() || rc.synced == nil || !rc.synced() {
		return Observation{}, fmt.Sprintf("cluster %s not yet observed", m.Cluster), reach
	}
	if age := r.now().Sub(reach); age > 3*r.opts.ProbeInterval {
		return Observation{}, fmt.Sprintf("cluster %s unreachable: not reached for %s", m.Cluster, age.Round(time.Second)), reach
	}
	obs, msg := observeIn(rc.lister, m, " in cluster "+m.Cluster)
	return obs, msg, reach
}

func (r *remotes) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rc := range r.clusters {
		rc.cancel()
	}
}

func toPDB(obj any) (*policyv1.PodDisruptionBudget, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pdb, ok := obj.(*policyv1.PodDisruptionBudget)
	return pdb, ok
}

// client is a client of another cluster of the federation, or nil and why
// it cannot be used.
func (r *remotes) client(cluster string) (kubernetes.Interface, string) {
	r.mu.Lock()
	rc, ok := r.clusters[cluster]
	r.mu.Unlock()
	if !ok || rc.client == nil {
		return nil, fmt.Sprintf("cluster %s unknown: Secret %s/%s has no usable kubeconfig for it (run kubesim federate)",
			cluster, r.opts.Namespace, r.opts.FederationSecret)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.lastErr != nil {
		return nil, fmt.Sprintf("cluster %s unreachable: %v", cluster, rc.lastErr)
	}
	if age := r.now().Sub(rc.lastReach); rc.lastReach.IsZero() || age > 3*r.opts.ProbeInterval {
		return nil, fmt.Sprintf("cluster %s unreachable: not reached for %s", cluster, age.Round(time.Second))
	}
	return rc.client, ""
}

// Package descheduler runs sigs.k8s.io/descheduler — its policy loading,
// plugins and eviction code — against a cluster, and reports every eviction
// it asks for: the pod, its node, the plugin, and whether the API server
// (and so every PodDisruptionBudget) let it through.
package descheduler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/pkg/api"
	upstream "sigs.k8s.io/descheduler/pkg/descheduler"
	eutils "sigs.k8s.io/descheduler/pkg/descheduler/evictions/utils"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
)

// Options say what to run and how.
type Options struct {
	Config *rest.Config
	// Policy is a descheduler/v1alpha2 DeschedulerPolicy (YAML).
	Policy []byte
	// DryRun asks the API server what it would allow and changes nothing.
	DryRun bool
	// Interval between cycles; 0 runs one cycle and returns.
	Interval time.Duration
	// OnEviction, if set, hears of each eviction as it happens.
	OnEviction func(Eviction)
}

// Report is what one run asked for and what came of it.
type Report struct {
	DryRun    bool       `json:"dryRun"`
	Evictions []Eviction `json:"evictions"`
}

// ErrTooFewNodes is returned when a cycle would be skipped, as upstream
// skips it, for want of two ready nodes.
var ErrTooFewNodes = errors.New("the descheduler needs at least two ready nodes to run a cycle")

var setupPlugins sync.Once

// Run runs descheduling cycles until one is done (Interval 0) or ctx ends.
func Run(ctx context.Context, o Options) (*Report, error) {
	setupPlugins.Do(upstream.SetupPlugins)
	reader, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, err
	}
	t := &tap{reader: reader, dryRun: o.DryRun, ownEvents: o.Interval == 0 && !o.DryRun, report: o.OnEviction}
	cfg := rest.CopyConfig(o.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	// JSON, so the tap can read the descheduler's pod watches (a real run)
	// and add events to them (a dry run).
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		t.next = next
		return t
	})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	policy, err := LoadPolicy(o.Policy, client)
	if err != nil {
		return nil, err
	}
	if o.Interval == 0 {
		if err := checkReadyNodes(ctx, reader, policy); err != nil {
			return nil, err
		}
	}
	groupVersion, err := eutils.SupportEviction(client)
	if err != nil {
		return nil, fmt.Errorf("eviction API: %w", err)
	}
	rs, err := options.NewDeschedulerServer()
	if err != nil {
		return nil, err
	}
	rs.Client, rs.EventClient = client, client
	if readsMetrics(policy) {
		// Actual utilisation, from metrics.k8s.io (in a kubesim cluster
		// the declared usage): upstream's command makes this client too.
		if rs.MetricsClient, err = metricsclient.NewForConfig(o.Config); err != nil {
			return nil, err
		}
	}
	rs.DeschedulingInterval = o.Interval
	rs.DisableMetrics = true
	rs.DefaultFeatureGates = features.DefaultMutableFeatureGate
	// Not upstream's dry run: that evicts from a copy of the cluster that
	// knows no PodDisruptionBudgets. The tap makes our evictions dry runs.
	rs.DryRun = false
	err = upstream.RunDeschedulerStrategies(ctx, rs, policy, groupVersion)
	t.mu.Lock()
	defer t.mu.Unlock()
	return &Report{DryRun: o.DryRun, Evictions: t.evictions}, err
}

// LoadPolicy reads, defaults and validates a v1alpha2 policy with the
// descheduler's own code. Each refusal is one line naming the field.
func LoadPolicy(data []byte, client kubernetes.Interface) (*api.DeschedulerPolicy, error) {
	setupPlugins.Do(upstream.SetupPlugins)
	dir, err := os.MkdirTemp("", "kubesim-descheduler-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return nil, err
	}
	policy, err := upstream.LoadPolicyConfig(file, client, pluginregistry.PluginRegistry)
	if err != nil {
		return nil, errors.New(oneLine(strings.ReplaceAll(err.Error(), file, "policy")))
	}
	if policy == nil || len(policy.Profiles) == 0 {
		return nil, errors.New("policy: no profiles")
	}
	if err := checkPluginConfigs(policy); err != nil {
		return nil, err
	}
	if policy.EvictionFailureEventNotification == nil {
		// Refusals become Events as well as evictions.
		policy.EvictionFailureEventNotification = ptr.To(true)
	}
	return policy, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// checkReadyNodes says so, rather than have upstream skip the cycle
// quietly, when fewer than two of the policy's nodes are ready.
func checkReadyNodes(ctx context.Context, client kubernetes.Interface, policy *api.DeschedulerPolicy) error {
	selector := ""
	if policy.NodeSelector != nil {
		selector = *policy.NodeSelector
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	ready := 0
	for i := range nodes.Items {
		if nodeutil.IsReady(&nodes.Items[i]) {
			ready++
		}
	}
	if ready < 2 {
		return fmt.Errorf("%w; the cluster has %d (kubesim scale node --replicas 2 adds some)", ErrTooFewNodes, ready)
	}
	return nil
}

// checkPluginConfigs catches, before any cycle, what upstream finds only
// when it builds a profile: an enabled plugin without a pluginConfig entry.
func checkPluginConfigs(policy *api.DeschedulerPolicy) error {
	for i, profile := range policy.Profiles {
		configured := map[string]bool{}
		for _, pc := range profile.PluginConfigs {
			configured[pc.Name] = true
		}
		p := profile.Plugins
		for _, set := range []api.PluginSet{p.PreSort, p.Sort, p.Deschedule, p.Balance, p.Filter, p.PreEvictionFilter} {
			for _, name := range set.Enabled {
				if !configured[name] {
					return fmt.Errorf("profiles[%d].pluginConfig: plugin %s is enabled but has no entry; add `- name: %s` with its args (`args: {}` for the defaults)", i, name, name)
				}
			}
		}
	}
	return nil
}

// readsMetrics reports whether the policy reads metrics.k8s.io.
func readsMetrics(policy *api.DeschedulerPolicy) bool {
	if policy.MetricsCollector != nil && policy.MetricsCollector.Enabled {
		return true
	}
	for _, p := range policy.MetricsProviders {
		if p.Source == api.KubernetesMetrics {
			return true
		}
	}
	return false
}

package ui

import (
	"context"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/kubesim/kubesim/internal/clusterclock"
)

// servesDevices says whether the cluster serves DRA's resource.k8s.io/v1.
func servesDevices(kube kubernetes.Interface) bool {
	_, err := kube.Discovery().ServerResourcesForGroupVersion(resourcev1.SchemeGroupVersion.String())
	return err == nil
}

// followDevices counts, per node, the devices its ResourceSlices publish
// and those allocated to claims: any change to either marks every node
// whose counts moved.
func (m *model) followDevices(factory informers.SharedInformerFactory) {
	slices := factory.Resource().V1().ResourceSlices()
	claims := factory.Resource().V1().ResourceClaims()
	m.slices, m.claims = slices.Lister(), claims.Lister()
	m.devices = map[string][2]int{}
	changed := func(any) {
		m.mu.Lock()
		m.devicesDirty = true
		m.mu.Unlock()
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed}
	_, _ = slices.Informer().AddEventHandler(handler)
	_, _ = claims.Informer().AddEventHandler(handler)
}

// countDevices recounts the devices of every node, marking those whose
// counts changed (m.mu held).
func (m *model) countDevices() {
	if m.slices == nil || !m.devicesDirty {
		return
	}
	m.devicesDirty = false
	counts := map[string][2]int{}
	pools := map[[2]string]string{} // driver, pool → its node
	all, _ := m.slices.List(labels.Everything())
	for _, s := range all {
		if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
			continue
		}
		node := *s.Spec.NodeName
		pools[[2]string{s.Spec.Driver, s.Spec.Pool.Name}] = node
		c := counts[node]
		c[0] += len(s.Spec.Devices)
		counts[node] = c
	}
	allClaims, _ := m.claims.List(labels.Everything())
	for _, claim := range allClaims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if node, ok := pools[[2]string{r.Driver, r.Pool}]; ok {
				c := counts[node]
				c[1]++
				counts[node] = c
			}
		}
	}
	for node, c := range counts {
		if m.devices[node] != c {
			m.dirtyNodes[node] = true
		}
	}
	for node := range m.devices {
		if _, ok := counts[node]; !ok {
			m.dirtyNodes[node] = true
		}
	}
	m.devices = counts
}

// usageInterval is how often the nodes' usage is read: the resolution the
// metrics API serves.
const usageInterval = 15 * time.Second

// pollUsage reads the nodes' usage from metrics.k8s.io until ctx ends,
// marking the nodes whose usage changed.
func (m *model) pollUsage(ctx context.Context, metrics metricsclient.Interface) {
	for {
		if list, err := metrics.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{}); err == nil {
			m.mu.Lock()
			for _, n := range list.Items {
				u := [2]int64{n.Usage.Cpu().MilliValue(), n.Usage.Memory().Value()}
				if m.usage[n.Name] != u {
					m.usage[n.Name] = u
					m.dirtyNodes[n.Name] = true
				}
			}
			m.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(clusterclock.Stretch(usageInterval)):
		}
	}
}

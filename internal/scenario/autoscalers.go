package scenario

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// hpaSamples records every HorizontalPodAutoscaler of a cluster as its
// status changes, from the informer's events: the report plots replicas
// and the metric over time. A cluster without HPAs records nothing.
type hpaSamples struct {
	mu     sync.Mutex
	series map[string]*hpaSeries // by namespace/name
}

type hpaSeries struct {
	result.Autoscaler
	times []time.Time // of the samples, made relative at the end
}

func (h *hpaSamples) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.record(obj) },
		UpdateFunc: func(_, obj any) { h.record(obj) },
	}
}

func (h *hpaSamples) record(obj any) {
	hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return
	}
	name, metric, target := hpa.Namespace+"/"+hpa.Name, describeMetric(hpa), targetOf(hpa)
	s := result.AutoscalerSample{CurrentReplicas: hpa.Status.CurrentReplicas, DesiredReplicas: hpa.Status.DesiredReplicas, Metric: currentMetric(hpa)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.series == nil {
		h.series = map[string]*hpaSeries{}
	}
	x := h.series[name]
	if x == nil {
		x = &hpaSeries{Autoscaler: result.Autoscaler{Name: name}}
		h.series[name] = x
	}
	x.Metric, x.Target, x.MaxReplicas = metric, target, hpa.Spec.MaxReplicas
	x.MinReplicas = 1
	if hpa.Spec.MinReplicas != nil {
		x.MinReplicas = *hpa.Spec.MinReplicas
	}
	if n := len(x.Samples); n > 0 && sameSample(x.Samples[n-1], s) {
		return // a change the chart does not show
	}
	x.Samples = append(x.Samples, s)
	x.times = append(x.times, time.Now())
}

func sameSample(a, b result.AutoscalerSample) bool {
	return a.CurrentReplicas == b.CurrentReplicas && a.DesiredReplicas == b.DesiredReplicas &&
		(a.Metric == nil) == (b.Metric == nil) && (a.Metric == nil || *a.Metric == *b.Metric)
}

// autoscalers are the series recorded, by name, their times since began.
func (h *hpaSamples) autoscalers(cluster string, began time.Time) []*result.Autoscaler {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*result.Autoscaler
	for _, x := range h.series {
		a := x.Autoscaler
		a.Cluster = cluster
		a.Samples = append([]result.AutoscalerSample(nil), x.Samples...)
		for i := range a.Samples {
			a.Samples[i].At = x.times[i].Sub(began)
		}
		out = append(out, &a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describeMetric names an HPA's first metric as the chart's axis shows it.
func describeMetric(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	if len(hpa.Spec.Metrics) == 0 {
		return "cpu utilisation %" // autoscaling/v1's default: 80 % of CPU
	}
	m := hpa.Spec.Metrics[0]
	switch {
	case m.Resource != nil && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType:
		return string(m.Resource.Name) + " utilisation %"
	case m.Resource != nil:
		return string(m.Resource.Name) + " per pod"
	case m.ContainerResource != nil:
		return fmt.Sprintf("%s of container %s", m.ContainerResource.Name, m.ContainerResource.Container)
	case m.Pods != nil:
		return m.Pods.Metric.Name + " per pod"
	case m.Object != nil:
		return m.Object.Metric.Name + " of " + strings.ToLower(m.Object.DescribedObject.Kind) + " " + m.Object.DescribedObject.Name
	case m.External != nil:
		return m.External.Metric.Name
	}
	return string(m.Type)
}

// targetOf is the first metric's target value, 0 without one.
func targetOf(hpa *autoscalingv2.HorizontalPodAutoscaler) float64 {
	if len(hpa.Spec.Metrics) == 0 {
		return 80
	}
	var t *autoscalingv2.MetricTarget
	switch m := hpa.Spec.Metrics[0]; {
	case m.Resource != nil:
		t = &m.Resource.Target
	case m.ContainerResource != nil:
		t = &m.ContainerResource.Target
	case m.Pods != nil:
		t = &m.Pods.Target
	case m.Object != nil:
		t = &m.Object.Target
	case m.External != nil:
		t = &m.External.Target
	default:
		return 0
	}
	return metricValue(t.AverageUtilization, t.AverageValue, t.Value)
}

// currentMetric is the first metric's current value, nil without one.
func currentMetric(hpa *autoscalingv2.HorizontalPodAutoscaler) *float64 {
	if len(hpa.Status.CurrentMetrics) == 0 {
		return nil
	}
	var c *autoscalingv2.MetricValueStatus
	switch m := hpa.Status.CurrentMetrics[0]; {
	case m.Resource != nil:
		c = &m.Resource.Current
	case m.ContainerResource != nil:
		c = &m.ContainerResource.Current
	case m.Pods != nil:
		c = &m.Pods.Current
	case m.Object != nil:
		c = &m.Object.Current
	case m.External != nil:
		c = &m.External.Current
	default:
		return nil
	}
	if c.AverageUtilization == nil && c.AverageValue == nil && c.Value == nil {
		return nil
	}
	v := metricValue(c.AverageUtilization, c.AverageValue, c.Value)
	return &v
}

func metricValue(util *int32, avg, value *resource.Quantity) float64 {
	switch {
	case util != nil:
		return float64(*util)
	case avg != nil:
		return avg.AsApproximateFloat64()
	case value != nil:
		return value.AsApproximateFloat64()
	}
	return 0
}

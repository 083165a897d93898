package usage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// metricsProvider answers custom.metrics.k8s.io and external.metrics.k8s.io
// (sigs.k8s.io/custom-metrics-apiserver's providers) from the declared
// metrics, evaluated when asked, as source answers metrics.k8s.io.
type metricsProvider struct {
	metrics *Metrics
	pods    corelisters.PodLister
	byLabel podIndex
	nodes   corelisters.NodeLister
	now     func() time.Time
	// failed is told of each metric that could not be evaluated.
	failed func(*EvalError)
}

var (
	_ provider.CustomMetricsProvider   = (*metricsProvider)(nil)
	_ provider.ExternalMetricsProvider = (*metricsProvider)(nil)
)

var podsResource = schema.GroupResource{Resource: "pods"}

// GetMetricByName is the metric of one pod or object.
func (p *metricsProvider) GetMetricByName(_ context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	notFound := provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	if !metricSelector.Matches(labels.Set{}) { // declared metrics have no labels
		return nil, notFound
	}
	now := p.now().Truncate(time.Second)
	if info.GroupResource == podsResource {
		pod, err := p.pods.Pods(name.Namespace).Get(name.Name)
		if err != nil || pod.Status.Phase != corev1.PodRunning {
			return nil, notFound
		}
		d := p.metrics.forPod(pod, info.Metric)
		if d == nil {
			return nil, notFound
		}
		v, ok := p.podValue(d, pod, info.Metric, now, nil) // one pod: its expression's limit bounds it
		if !ok {
			return nil, notFound
		}
		return &v, nil
	}
	d := p.metrics.forObject(name.Namespace, info.GroupResource, name.Name, info.Metric)
	if d == nil {
		return nil, notFound
	}
	f, err := d.eval()
	if err != nil {
		p.fail(err)
		return nil, notFound
	}
	return &custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{APIVersion: d.object.APIVersion, Kind: d.object.Kind, Name: d.object.Name, Namespace: name.Namespace},
		Metric:          custom_metrics.MetricIdentifier{Name: info.Metric},
		Timestamp:       metav1.NewTime(now),
		Value:           quantity(f),
	}, nil
}

// GetMetricBySelector is the metric of each running pod of the namespace
// that selector matches and a CustomMetric declares it for. Objects other
// than pods are asked for by name.
func (p *metricsProvider) GetMetricBySelector(_ context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	if info.GroupResource != podsResource || !metricSelector.Matches(labels.Set{}) {
		return nil, provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	declared := p.metrics.matching(p.metrics.custom, namespace, info.Metric, func(d *declaredMetric) bool { return d.pods != nil })
	if len(declared) == 0 {
		return nil, provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	pods, err := p.byLabel.list(namespace, selector)
	if err != nil {
		return nil, err
	}
	now := p.now().Truncate(time.Second)
	out := &custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{}}
	budget := newReadBudget()
	for _, pod := range pods {
		if pod.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, d := range declared {
			if !d.pods.Matches(labels.Set(pod.Labels)) {
				continue
			}
			if v, ok := p.podValue(d, pod, info.Metric, now, budget); ok {
				out.Items = append(out.Items, v)
			}
			break
		}
	}
	return out, nil
}

func (p *metricsProvider) podValue(d *declaredMetric, pod *corev1.Pod, metric string, now time.Time, budget *readBudget) (custom_metrics.MetricValue, bool) {
	var node *corev1.Node
	if d.value.program != nil && d.value.program.Reads("node") {
		node, _ = p.nodes.Get(pod.Spec.NodeName)
	}
	f, err := d.evalPod(pod, node, budget)
	if err != nil {
		p.fail(err)
		return custom_metrics.MetricValue{}, false
	}
	return custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, Namespace: pod.Namespace},
		Metric:          custom_metrics.MetricIdentifier{Name: metric},
		Timestamp:       metav1.NewTime(now),
		Value:           quantity(f),
	}, true
}

// ListAllMetrics is every declared custom metric, for discovery.
func (p *metricsProvider) ListAllMetrics() []provider.CustomMetricInfo {
	p.metrics.mu.RLock()
	defer p.metrics.mu.RUnlock()
	seen := map[provider.CustomMetricInfo]bool{}
	var out []provider.CustomMetricInfo
	for _, d := range p.metrics.custom {
		info := provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: d.metric}
		if d.object != nil {
			info.GroupResource = objectResource(d.object)
		}
		if !seen[info] {
			seen[info] = true
			out = append(out, info)
		}
	}
	return out
}

// GetExternalMetric is each ExternalMetric of the namespace of that name
// whose labels the selector matches.
func (p *metricsProvider) GetExternalMetric(_ context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	declared := p.metrics.matching(p.metrics.external, namespace, info.Metric, func(d *declaredMetric) bool { return metricSelector.Matches(d.labels) })
	if len(declared) == 0 {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
			Message: fmt.Sprintf("no ExternalMetric of namespace %s declares the metric %s with labels matching %q", namespace, info.Metric, metricSelector)}}
	}
	now := p.now().Truncate(time.Second)
	out := &external_metrics.ExternalMetricValueList{Items: []external_metrics.ExternalMetricValue{}}
	for _, d := range declared {
		f, err := d.eval()
		if err != nil {
			p.fail(err)
			continue
		}
		out.Items = append(out.Items, external_metrics.ExternalMetricValue{
			MetricName:   info.Metric,
			MetricLabels: d.labels,
			Timestamp:    metav1.NewTime(now),
			Value:        quantity(f),
		})
	}
	return out, nil
}

// ListAllExternalMetrics is every declared external metric, for discovery.
func (p *metricsProvider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	p.metrics.mu.RLock()
	defer p.metrics.mu.RUnlock()
	seen := map[string]bool{}
	var out []provider.ExternalMetricInfo
	for _, d := range p.metrics.external {
		if !seen[d.metric] {
			seen[d.metric] = true
			out = append(out, provider.ExternalMetricInfo{Metric: d.metric})
		}
	}
	return out
}

func (p *metricsProvider) fail(err error) {
	var ee *EvalError
	if errors.As(err, &ee) && p.failed != nil {
		p.failed(ee)
	}
}

// quantity is a metric's value, kept to the thousandth as the HPA
// controller reads it (MilliValue).
func quantity(f float64) resource.Quantity {
	return *resource.NewMilliQuantity(int64(math.Round(f*1000)), resource.DecimalSI)
}

package usage

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

// Metrics are the declared custom and external metrics of a cluster
// (kubesim.io CustomMetrics and ExternalMetrics), compiled, for the
// custom.metrics.k8s.io and external.metrics.k8s.io APIs. Only accepted
// ones are held: one whose value is not valid is not served. Safe for
// concurrent use.
type Metrics struct {
	env *kwokcel.Env

	mu       sync.RWMutex
	custom   map[string]*declaredMetric // by namespace/name
	external map[string]*declaredMetric
}

// declaredMetric is one CustomMetric or ExternalMetric, compiled.
type declaredMetric struct {
	Ref    Ref
	metric string
	// Of a CustomMetric: pods (its selector), else object.
	pods   labels.Selector
	object *autoscalingv2.CrossVersionObjectReference
	// Of an ExternalMetric: its labels.
	labels labels.Set
	value  value
}

// NewMetrics is a cluster without custom or external metrics.
func NewMetrics() (*Metrics, error) {
	env, err := kwokcel.NewUsageEnv()
	if err != nil {
		return nil, err
	}
	return &Metrics{env: env, custom: map[string]*declaredMetric{}, external: map[string]*declaredMetric{}}, nil
}

// SetCustomMetric declares (or redeclares) a CustomMetric. The error names
// the field that is not valid; the metric is then not served.
func (m *Metrics) SetCustomMetric(cm *v1alpha1.CustomMetric) error {
	ref := Ref{v1alpha1.CustomMetricKind, cm.Namespace, cm.Name}
	d := &declaredMetric{Ref: ref, metric: cm.Spec.Metric, object: cm.Spec.Object.DeepCopy()}
	v, err := m.compile(cm.Spec.Value, cm.Spec.Expression)
	if err == nil && cm.Spec.Pods != nil {
		d.pods, err = metav1.LabelSelectorAsSelector(cm.Spec.Pods.Selector)
		if err != nil {
			err = fmt.Errorf("spec.pods.selector: %w", err)
		}
	}
	if err == nil && cm.Spec.Pods == nil && cm.Spec.Object == nil {
		err = fmt.Errorf("spec: set one of spec.pods (a metric of each pod) or spec.object (of one object)")
	}
	d.value = v
	m.set(m.custom, ref, d, err)
	return err
}

// SetExternalMetric declares (or redeclares) an ExternalMetric; its error
// is as SetCustomMetric's.
func (m *Metrics) SetExternalMetric(em *v1alpha1.ExternalMetric) error {
	ref := Ref{v1alpha1.ExternalMetricKind, em.Namespace, em.Name}
	v, err := m.compile(em.Spec.Value, em.Spec.Expression)
	m.set(m.external, ref, &declaredMetric{Ref: ref, metric: em.Spec.Metric, labels: labels.Set(em.Spec.Labels), value: v}, err)
	return err
}

// DeleteCustomMetric and DeleteExternalMetric forget a metric.
func (m *Metrics) DeleteCustomMetric(namespace, name string) { m.delete(m.custom, namespace, name) }
func (m *Metrics) DeleteExternalMetric(namespace, name string) {
	m.delete(m.external, namespace, name)
}

func (m *Metrics) set(in map[string]*declaredMetric, ref Ref, d *declaredMetric, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		delete(in, ref.Namespace+"/"+ref.Name)
		return
	}
	in[ref.Namespace+"/"+ref.Name] = d
}

func (m *Metrics) delete(in map[string]*declaredMetric, namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(in, namespace+"/"+name)
}

func (m *Metrics) compile(q *resource.Quantity, expression *string) (value, error) {
	switch {
	case q != nil && expression != nil:
		return value{}, fmt.Errorf("spec: set one of spec.value or spec.expression")
	case q != nil:
		f := q.AsApproximateFloat64()
		if f < 0 {
			return value{}, fmt.Errorf("spec.value: %s is negative; give a metric of 0 or more", q)
		}
		if err := metricFits(f); err != nil {
			return value{}, fmt.Errorf("spec.value: %w; give a smaller metric", err)
		}
		return value{constant: &f}, nil
	case expression != nil:
		p, err := m.env.Compile(*expression)
		if err != nil {
			return value{}, fmt.Errorf("spec.expression: %w", err)
		}
		return value{program: p}, nil
	}
	return value{}, fmt.Errorf("spec: set spec.value or spec.expression")
}

// matching are the declared metrics of in, in the namespace and of the
// name, that keep says to, ordered by name (of several for one pod, the
// first wins).
func (m *Metrics) matching(in map[string]*declaredMetric, namespace, metric string, keep func(*declaredMetric) bool) []*declaredMetric {
	m.mu.RLock()
	var out []*declaredMetric
	for _, d := range in {
		if d.Ref.Namespace == namespace && strings.EqualFold(d.metric, metric) && keep(d) {
			out = append(out, d)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b *declaredMetric) int { return strings.Compare(a.Ref.Name, b.Ref.Name) })
	return out
}

// podsMetrics are the namespace's CustomMetrics of pods, by name.
func (m *Metrics) podsMetrics(namespace string) []*declaredMetric {
	m.mu.RLock()
	var out []*declaredMetric
	for _, d := range m.custom {
		if d.Ref.Namespace == namespace && d.pods != nil {
			out = append(out, d)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b *declaredMetric) int { return strings.Compare(a.Ref.Name, b.Ref.Name) })
	return out
}

// forPod is the declared metric of the pod: the first by name whose
// selector matches it.
func (m *Metrics) forPod(pod *corev1.Pod, metric string) *declaredMetric {
	ds := m.matching(m.custom, pod.Namespace, metric, func(d *declaredMetric) bool {
		return d.pods != nil && d.pods.Matches(labels.Set(pod.Labels))
	})
	if len(ds) == 0 {
		return nil
	}
	return ds[0]
}

// forObject is the declared metric of the object of resource gr and name.
func (m *Metrics) forObject(namespace string, gr schema.GroupResource, name, metric string) *declaredMetric {
	ds := m.matching(m.custom, namespace, metric, func(d *declaredMetric) bool {
		return d.object != nil && d.object.Name == name && objectResource(d.object) == gr
	})
	if len(ds) == 0 {
		return nil
	}
	return ds[0]
}

// objectResource is the resource of the object's kind: its lower-case
// plural, as the API names a kind's resource (Ingress: ingresses).
func objectResource(o *autoscalingv2.CrossVersionObjectReference) schema.GroupResource {
	gv, _ := schema.ParseGroupVersion(o.APIVersion)
	plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(o.Kind))
	return plural.GroupResource()
}

// evalPod is the metric of a pod (and its node, which may be nil), its
// expression within budget, the read's.
func (d *declaredMetric) evalPod(pod *corev1.Pod, node *corev1.Node, budget *readBudget) (float64, error) {
	s := &Subject{Pod: pod, Node: node, budget: budget}
	f, err := s.eval(d.Ref, d.value, &corev1.Container{})
	if err == nil {
		err = metricFits(f)
	}
	if ofTheObject(err) {
		return 0, &EvalError{Usage: d.Ref, Err: err}
	}
	if err != nil {
		return 0, &EvalError{Usage: d.Ref, Err: fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)}
	}
	return f, nil
}

// eval is the metric of an object or of something outside the cluster:
// expressions see no pod, node or container.
func (d *declaredMetric) eval() (float64, error) {
	if d.value.constant != nil {
		return *d.value.constant, nil
	}
	f, err := d.value.program.Number(map[string]any{})
	if err == nil && f < 0 {
		err = fmt.Errorf("the expression returned a negative metric")
	}
	if err == nil {
		err = metricFits(f)
	}
	if err != nil {
		return 0, &EvalError{Usage: d.Ref, Err: err}
	}
	return f, nil
}

// metricFits says whether a custom or external metric of v can be served:
// in thousandths, an int64, as the HPA controller reads it. More would
// wrap round to a negative metric.
func metricFits(v float64) error {
	if math.Round(v*1000) < int64Range {
		return nil
	}
	return fmt.Errorf("%v is more than a metric can carry (%.4g at most)", v, math.MaxInt64/1000.0)
}

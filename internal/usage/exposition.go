package usage

import (
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// expose writes the endpoint's metrics of node and its pods in
// Prometheus' text format: each metric's series, one for the node, or one
// per pod or per container of its pods, as its dimension says, in the
// order of spec.metrics. A series whose labels or value fail to evaluate
// is left out, and failed is told; a metric without series is left out
// (as a registry leaves it).
func (ep *endpoint) expose(w io.Writer, node *corev1.Node, pods []*corev1.Pod, maps *objectMaps, failed func(*EvalError)) error {
	ofNode := &Subject{Node: node, maps: maps}
	ofPods := make([]*Subject, len(pods))
	for i, pod := range pods {
		ofPods[i] = &Subject{Pod: pod, Node: node, maps: maps}
	}
	for _, x := range ep.metrics {
		mf := &dto.MetricFamily{Name: &x.name, Type: x.promType()}
		if x.help != "" {
			mf.Help = &x.help
		}
		add := func(s *Subject, c *corev1.Container) {
			m, err := x.series(s, c)
			if err != nil {
				failed(&EvalError{Usage: ep.ref, Err: fmt.Errorf("spec.metrics[%d] (%s), %s: %w", x.index, x.name, subjectName(s, c), err)})
				return
			}
			mf.Metric = append(mf.Metric, m)
		}
		switch x.dimension {
		case kwokv1alpha1.MetricDimensionNode:
			add(ofNode, nil)
		case kwokv1alpha1.MetricDimensionPod:
			for _, s := range ofPods {
				add(s, nil)
			}
		case kwokv1alpha1.MetricDimensionContainer:
			for _, s := range ofPods {
				for i := range s.Pod.Spec.Containers {
					add(s, &s.Pod.Spec.Containers[i])
				}
			}
		}
		if len(mf.Metric) == 0 {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

func (x *exposed) promType() *dto.MetricType {
	switch x.kind {
	case kwokv1alpha1.MetricKindCounter:
		return dto.MetricType_COUNTER.Enum()
	case kwokv1alpha1.MetricKindHistogram:
		return dto.MetricType_HISTOGRAM.Enum()
	}
	return dto.MetricType_GAUGE.Enum()
}

// series is the metric of the subject's container (nil: of the pod, or of
// the node for a subject without a pod).
func (x *exposed) series(s *Subject, c *corev1.Container) (*dto.Metric, error) {
	m := &dto.Metric{}
	for _, l := range x.labels {
		v, err := l.value.Text(s.vars(l.value, c))
		if err != nil {
			return nil, fmt.Errorf("label %s: %w", l.name, err)
		}
		m.Label = append(m.Label, &dto.LabelPair{Name: &l.name, Value: &v})
	}
	if x.kind == kwokv1alpha1.MetricKindHistogram {
		h, err := x.histogram(s, c)
		m.Histogram = h
		return m, err
	}
	v, err := x.value.Number(s.vars(x.value, c))
	if err != nil {
		return nil, err
	}
	if x.kind == kwokv1alpha1.MetricKindCounter {
		m.Counter = &dto.Counter{Value: &v}
	} else {
		m.Gauge = &dto.Gauge{Value: &v}
	}
	return m, nil
}

// histogram: each bucket's value counts the observations up to its le
// (whole ones, as KWOK counts them) that the one below did not; a bucket
// shows those of every bucket up to it, hidden ones included, and the sum
// takes each observation at its bucket's le.
func (x *exposed) histogram(s *Subject, c *corev1.Container) (*dto.Histogram, error) {
	var count uint64
	var sum float64
	h := &dto.Histogram{}
	for _, b := range x.buckets {
		f, err := b.count.Number(s.vars(b.count, c))
		if err == nil && f < 0 {
			err = fmt.Errorf("the count %v is negative", f)
		}
		if err != nil {
			return nil, fmt.Errorf("bucket le=%v: %w", b.le, err)
		}
		n := uint64(f)
		count += n
		sum += b.le * float64(n)
		if !b.hidden {
			le, cumulative := b.le, count
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: &le, CumulativeCount: &cumulative})
		}
	}
	h.SampleCount, h.SampleSum = &count, &sum
	return h, nil
}

// subjectName says which series failed.
func subjectName(s *Subject, c *corev1.Container) string {
	switch {
	case s.Pod == nil:
		return "node " + s.Node.Name
	case c == nil:
		return "pod " + s.Pod.Namespace + "/" + s.Pod.Name
	}
	return "pod " + s.Pod.Namespace + "/" + s.Pod.Name + " container " + c.Name
}

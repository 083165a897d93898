package scenario

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The recorder keeps an HPA's changes of replicas or metric, not every
// status write, and reads the first metric of any type.
func TestHPASamples(t *testing.T) {
	hpa := func(current, desired int32, util *int32) *autoscalingv2.HorizontalPodAutoscaler {
		h := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 6, Metrics: []autoscalingv2.MetricSpec{{
				Type:     autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}},
			}}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: current, DesiredReplicas: desired},
		}
		if util != nil {
			h.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: util}}}}
		}
		return h
	}
	began := time.Now()
	var h hpaSamples
	for _, x := range []any{hpa(2, 2, nil), hpa(2, 2, ptr.To[int32](30)), hpa(2, 2, ptr.To[int32](30)), hpa(2, 6, ptr.To[int32](150)), hpa(6, 6, ptr.To[int32](150)), "not an HPA"} {
		h.record(x)
	}
	got := h.autoscalers("", began)
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	a := got[0]
	if a.Name != "default/web" || a.Metric != "cpu utilisation %" || a.Target != 50 || a.MinReplicas != 2 || a.MaxReplicas != 6 || len(a.Samples) != 4 {
		t.Fatalf("%+v", a)
	}
	if s := a.Samples; s[0].Metric != nil || *s[1].Metric != 30 || s[2].DesiredReplicas != 6 || s[3].CurrentReplicas != 6 || s[3].At < s[0].At || s[0].At < 0 {
		t.Errorf("samples %+v", s)
	}

	ext := &autoscalingv2.HorizontalPodAutoscaler{
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType,
			External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue_length"}, Target: autoscalingv2.MetricTarget{AverageValue: ptr.To(resource.MustParse("30"))}}}}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ExternalMetricSourceType,
			External: &autoscalingv2.ExternalMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse("45"))}}}}},
	}
	if m, tg, c := describeMetric(ext), targetOf(ext), currentMetric(ext); m != "queue_length" || tg != 30 || c == nil || *c != 45 {
		t.Errorf("external: %q target %v current %v", m, tg, c)
	}
}

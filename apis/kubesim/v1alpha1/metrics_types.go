package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Custom and external metrics as data: what the usage-metrics component
// serves as custom.metrics.k8s.io and external.metrics.k8s.io, for HPAs on
// Pods, Object and External metrics. KWOK has no API for these.
const (
	GroupName = "kubesim.io"

	CustomMetricKind   = "CustomMetric"
	ExternalMetricKind = "ExternalMetric"

	// MetricConditionAccepted says whether a metric's value is valid
	// (False names the field and why): one that is not is not served.
	MetricConditionAccepted = "Accepted"
)

var (
	CustomMetricsResource   = schema.GroupVersionResource{Group: GroupName, Version: "v1alpha1", Resource: "custommetrics"}
	ExternalMetricsResource = schema.GroupVersionResource{Group: GroupName, Version: "v1alpha1", Resource: "externalmetrics"}
)

// CustomMetric is a metric of objects of its namespace, served as
// custom.metrics.k8s.io: of each pod its selector matches (an HPA's Pods
// metric), or of one named object (an Object metric).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Metric",type=string,JSONPath=`.spec.metric`
// +kubebuilder:printcolumn:name="Pods",type=integer,JSONPath=`.status.pods`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
type CustomMetric struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              CustomMetricSpec `json:"spec"`
	Status            MetricStatus     `json:"status,omitempty"`
}

// CustomMetricSpec names the metric, what it describes and its value.
//
// +kubebuilder:validation:XValidation:rule="has(self.pods) != has(self.object)",message="set one of spec.pods (a metric of each pod) or spec.object (of one object)"
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.expression)",message="set one of spec.value or spec.expression"
type CustomMetricSpec struct {
	// Metric is the metric's name, as an HPA asks for it
	// (requests_per_second).
	// +kubebuilder:validation:MinLength=1
	Metric string `json:"metric"`
	// Pods: the metric is each pod's, of the pods of the namespace its
	// selector matches (no selector: all).
	Pods *MetricPods `json:"pods,omitempty"`
	// Object: the metric is the object's, named as an HPA's Object metric
	// names it (kind, name, apiVersion).
	Object *autoscalingv2.CrossVersionObjectReference `json:"object,omitempty"`
	// Value is the metric's value, 0 or more.
	Value *resource.Quantity `json:"value,omitempty"`
	// Expression is a CEL expression evaluated each time the metric is
	// read, returning a number of 0 or more, with KWOK's functions (Now,
	// Rand, SinceSecond, UnixSecond, Quantity) and, for pods, the pod as
	// `pod` and its node as `node`.
	Expression *string `json:"expression,omitempty"`
}

// MetricPods selects pods of the metric's namespace.
type MetricPods struct {
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ExternalMetric is a metric of something outside the cluster (the length
// of a queue), served as external.metrics.k8s.io in its namespace: an
// HPA's External metric of that name, whose selector matches its labels,
// reads it. Several of one name are summed, as the HPA controller sums
// what it reads.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Metric",type=string,JSONPath=`.spec.metric`
// +kubebuilder:printcolumn:name="Value",type=string,JSONPath=`.spec.value`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
type ExternalMetric struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ExternalMetricSpec `json:"spec"`
	Status            MetricStatus       `json:"status,omitempty"`
}

// ExternalMetricSpec names the metric, its labels and its value.
//
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.expression)",message="set one of spec.value or spec.expression"
type ExternalMetricSpec struct {
	// Metric is the metric's name, as an HPA asks for it (queue_length).
	// +kubebuilder:validation:MinLength=1
	Metric string `json:"metric"`
	// Labels are the metric's labels, which an HPA's metric selector
	// matches (queue: jobs).
	Labels map[string]string `json:"labels,omitempty"`
	// Value is the metric's value, 0 or more.
	Value *resource.Quantity `json:"value,omitempty"`
	// Expression is a CEL expression evaluated each time the metric is
	// read, returning a number of 0 or more, with KWOK's functions (Now,
	// Rand, UnixSecond, Quantity).
	Expression *string `json:"expression,omitempty"`
}

// MetricStatus is what the usage-metrics component reports of a metric.
type MetricStatus struct {
	// Conditions: Accepted.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Pods is how many pods a CustomMetric's selector matches: 0 is fine
	// (the metric has no pods yet), and says so.
	Pods *int32 `json:"pods,omitempty"`
}

// CustomMetricList is a list of CustomMetrics.
//
// +kubebuilder:object:root=true
type CustomMetricList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []CustomMetric `json:"items"`
}

// ExternalMetricList is a list of ExternalMetrics.
//
// +kubebuilder:object:root=true
type ExternalMetricList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ExternalMetric `json:"items"`
}

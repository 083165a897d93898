package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metric declares a kubelet-style Prometheus endpoint (such as
// /metrics/resource) whose values are CEL expressions over nodes, pods
// and containers. KWOK's API as of its v0.8.0; kubesim's usage-metrics
// serves it on each simulated node's kubelet port, through the API
// server's node proxy (/api/v1/nodes/NODE/proxy/PATH), evaluated when
// read.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Metric struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              MetricSpec   `json:"spec"`
	Status            MetricStatus `json:"status,omitempty"`
}

// MetricSpec is the endpoint's path and its metrics.
type MetricSpec struct {
	// Path, under /metrics/, with {nodeName} standing for each node's
	// name; without it, the path is of the node named as the Metric.
	// +kubebuilder:validation:MinLength=1
	Path    string         `json:"path"`
	Metrics []MetricConfig `json:"metrics"`
}

// MetricConfig is one metric of the endpoint.
type MetricConfig struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	Help string `json:"help,omitempty"`
	// +kubebuilder:validation:Enum=counter;gauge;histogram
	Kind MetricKindName `json:"kind"`
	// +listType=map
	// +listMapKey=name
	Labels []MetricLabel `json:"labels,omitempty"`
	// Value is a CEL expression.
	Value string `json:"value,omitempty"`
	// +listType=map
	// +listMapKey=le
	Buckets []MetricBucket `json:"buckets,omitempty"`
	// Dimension: one series per node, pod or container.
	// +kubebuilder:default=node
	// +kubebuilder:validation:Enum=node;pod;container
	Dimension MetricDimension `json:"dimension,omitempty"`
}

// MetricKindName is a Prometheus metric type (KWOK calls the type Kind,
// which the kubebuilder marker for object kinds makes awkward here).
type MetricKindName string

// The metric types.
const (
	MetricKindCounter   MetricKindName = "counter"
	MetricKindGauge     MetricKindName = "gauge"
	MetricKindHistogram MetricKindName = "histogram"
)

// MetricDimension is what one series of a metric is about.
type MetricDimension string

// The dimensions.
const (
	MetricDimensionNode      MetricDimension = "node"
	MetricDimensionPod       MetricDimension = "pod"
	MetricDimensionContainer MetricDimension = "container"
)

// MetricLabel is a label whose value is a CEL expression.
type MetricLabel struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	Value string `json:"value"`
}

// MetricBucket is a histogram bucket whose count is a CEL expression; a
// hidden one is counted into the next and not shown.
type MetricBucket struct {
	// +kubebuilder:validation:Minimum=0
	Le     float64 `json:"le"`
	Value  string  `json:"value"`
	Hidden bool    `json:"hidden,omitempty"`
}

// MetricStatus is what kubesim reports of a Metric.
type MetricStatus struct {
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MetricList is a list of Metrics.
//
// +kubebuilder:object:root=true
type MetricList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metric `json:"items"`
}

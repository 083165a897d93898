package v1alpha1

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
)

// Kinds and resources of the usage API, KWOK's as of its v0.8.0: what
// simulated pods use, which kubesim serves as metrics.k8s.io.
const (
	ResourceUsageKind        = "ResourceUsage"
	ClusterResourceUsageKind = "ClusterResourceUsage"
	MetricKind               = "Metric"
)

var (
	ResourceUsagesResource        = schema.GroupVersionResource{Group: GroupName, Version: Version, Resource: "resourceusages"}
	ClusterResourceUsagesResource = schema.GroupVersionResource{Group: GroupName, Version: Version, Resource: "clusterresourceusages"}
	MetricsResource               = schema.GroupVersionResource{Group: GroupName, Version: Version, Resource: "metrics"}
)

// ResourceUsage is the usage of the pod of the same namespace and name. It
// takes precedence over every ClusterResourceUsage.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type ResourceUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ResourceUsageSpec   `json:"spec"`
	Status            ResourceUsageStatus `json:"status,omitempty"`
}

// ResourceUsageSpec lists the usage of the pod's containers.
type ResourceUsageSpec struct {
	// Usages: the first entry that names a container is its usage; the
	// first entry naming none is the usage of the containers no entry names.
	Usages []ResourceUsageContainer `json:"usages,omitempty"`
}

// ResourceUsageStatus is what the metrics component reports of a usage.
type ResourceUsageStatus struct {
	// Conditions: Accepted says whether every expression compiled (False
	// names the one that did not). KWOK's own conditions have a subset of
	// these fields, so a status written for KWOK validates here too.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourceUsageList is a list of ResourceUsages.
//
// +kubebuilder:object:root=true
type ResourceUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ResourceUsage `json:"items"`
}

// ResourceUsageContainer is the usage of some containers.
type ResourceUsageContainer struct {
	// Containers names the containers; none: every other container.
	Containers []string `json:"containers,omitempty"`
	// Usage of each resource (cpu in cores, memory in bytes).
	Usage map[string]ResourceUsageValue `json:"usage,omitempty"`
}

// ResourceUsageValue is a usage: a constant, or a CEL expression
// evaluated each time the usage is read, with pod, node and container
// bound and KWOK's functions (Now, Rand, SinceSecond, UnixSecond,
// Quantity, Usage, CumulativeUsage). Value wins when both are given.
type ResourceUsageValue struct {
	Value      *resource.Quantity `json:"value,omitempty"`
	Expression *string            `json:"expression,omitempty"`
}

// ClusterResourceUsage is the usage of the pods its selector matches, in
// any namespace. Of several that match a pod, the first by name that
// declares a container's usage gives it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
type ClusterResourceUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ClusterResourceUsageSpec   `json:"spec"`
	Status            ClusterResourceUsageStatus `json:"status,omitempty"`
}

// ClusterResourceUsageSpec selects pods and says what they use.
type ClusterResourceUsageSpec struct {
	// Selector: no selector matches every pod.
	Selector *ObjectSelector          `json:"selector,omitempty"`
	Usages   []ResourceUsageContainer `json:"usages,omitempty"`
}

// ClusterResourceUsageStatus is what the metrics component reports of a
// usage: Accepted as for a ResourceUsage.
type ClusterResourceUsageStatus struct {
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterResourceUsageList is a list of ClusterResourceUsages.
//
// +kubebuilder:object:root=true
type ClusterResourceUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []ClusterResourceUsage `json:"items"`
}

// ObjectSelector matches objects by namespace and name; an empty list
// matches all. MatchLabels and MatchExpressions are kubesim's addition to
// KWOK's selector (a label selector, as a Deployment's): a scenario's usage
// step picks pods by label, and so do pods an HPA adds later.
type ObjectSelector struct {
	MatchNamespaces  []string                          `json:"matchNamespaces,omitempty"`
	MatchNames       []string                          `json:"matchNames,omitempty"`
	MatchLabels      map[string]string                 `json:"matchLabels,omitempty"`
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelector is the selector's label part, nil when it has none.
func (s *ObjectSelector) LabelSelector() *metav1.LabelSelector {
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		return nil
	}
	return &metav1.LabelSelector{MatchLabels: s.MatchLabels, MatchExpressions: s.MatchExpressions}
}

// SelectLabels sets the selector's label part from a selector as kubectl's
// -l takes it (app=web,tier!=db); Gt and Lt have no LabelSelector form.
func (s *ObjectSelector) SelectLabels(selector string) error {
	sel, err := labels.Parse(selector)
	if err != nil {
		return err
	}
	reqs, _ := sel.Requirements()
	s.MatchLabels, s.MatchExpressions = nil, make([]metav1.LabelSelectorRequirement, 0, len(reqs))
	for _, r := range reqs {
		op, ok := map[selection.Operator]metav1.LabelSelectorOperator{
			selection.Equals: metav1.LabelSelectorOpIn, selection.DoubleEquals: metav1.LabelSelectorOpIn, selection.In: metav1.LabelSelectorOpIn,
			selection.NotEquals: metav1.LabelSelectorOpNotIn, selection.NotIn: metav1.LabelSelectorOpNotIn,
			selection.Exists: metav1.LabelSelectorOpExists, selection.DoesNotExist: metav1.LabelSelectorOpDoesNotExist,
		}[r.Operator()]
		if !ok {
			return fmt.Errorf("%s: select by =, !=, in, notin, exists or !exists", r.String())
		}
		s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op, Values: r.ValuesUnsorted()})
	}
	return nil
}

// Matches reports whether the object namespace/name is selected (its
// labels aside: see LabelSelector). A nil selector selects everything.
func (s *ObjectSelector) Matches(namespace, name string) bool {
	if s == nil {
		return true
	}
	return (len(s.MatchNamespaces) == 0 || slices.Contains(s.MatchNamespaces, namespace)) &&
		(len(s.MatchNames) == 0 || slices.Contains(s.MatchNames, name))
}

// UsageConditionAccepted is the condition saying whether a usage's
// expressions compiled.
const UsageConditionAccepted = "Accepted"

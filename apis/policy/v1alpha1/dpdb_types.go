package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Group, version and kind of DistributedPodDisruptionBudget.
const (
	GroupName    = "policy.kubesim.io"
	Version      = "v1alpha1"
	GroupVersion = GroupName + "/" + Version
	Kind         = "DistributedPodDisruptionBudget"
)

// Resource is where DistributedPodDisruptionBudgets are served.
var Resource = schema.GroupVersionResource{Group: GroupName, Version: Version, Resource: "distributedpoddisruptionbudgets"}

// DistributedPodDisruptionBudget is a disruption budget over pods in
// several namespaces and clusters. Its controller keeps one child
// policy/v1 PodDisruptionBudget (same name and namespace, same selector)
// whose allowed disruptions are what the whole federation allows.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dpdb,categories=all
// +kubebuilder:printcolumn:name="Min Available",type=string,JSONPath=`.spec.minAvailable`
// +kubebuilder:printcolumn:name="Max Unavailable",type=string,JSONPath=`.spec.maxUnavailable`
// +kubebuilder:printcolumn:name="Allowed Disruptions",type=integer,JSONPath=`.status.disruptionsAllowed`
// +kubebuilder:printcolumn:name="Federated",type=string,JSONPath=`.status.federated`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DistributedPodDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DistributedPodDisruptionBudgetSpec   `json:"spec"`
	Status            DistributedPodDisruptionBudgetStatus `json:"status,omitempty"`
}

// DistributedPodDisruptionBudgetList is a list of DistributedPodDisruptionBudgets.
//
// +kubebuilder:object:root=true
type DistributedPodDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DistributedPodDisruptionBudget `json:"items"`
}

// DistributedPodDisruptionBudgetSpec is the budget: this namespace's pods
// (Selector) together with the pods the federated PDBs cover.
//
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="set exactly one of spec.minAvailable or spec.maxUnavailable"
type DistributedPodDisruptionBudgetSpec struct {
	// Selector picks this namespace's pods; the child PDB selects the same.
	Selector *metav1.LabelSelector `json:"selector"`
	// MinAvailable is how many pods of the whole federation must stay
	// healthy: a number, or a percentage of the federation's expected pods
	// (rounded up, as policy/v1 does).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$') && int(self.replace('%', '')) <= 100",message="must be a non-negative integer or a percentage from 0% to 100%"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
	// MaxUnavailable is how many pods of the whole federation may be
	// unavailable: a number, or a percentage of its expected pods (rounded
	// up, as policy/v1 does).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^[0-9]+%$') && int(self.replace('%', '')) <= 100",message="must be a non-negative integer or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// Federation lists the PDBs whose pods share the budget: plain PDBs or
	// other DPDBs' children, in this cluster or in others.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Federation []FederatedPDB `json:"federation,omitempty"`
}

// FederatedPDB names a policy/v1 PodDisruptionBudget.
type FederatedPDB struct {
	// Name of the PDB.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the PDB; empty means the DPDB's.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
	// Cluster is the PDB's cluster, as named in the federation Secret
	// (`kubesim federate`); empty means this cluster.
	// +kubebuilder:validation:MaxLength=63
	Cluster string `json:"cluster,omitempty"`
}

// DistributedPodDisruptionBudgetStatus is what the controller last saw.
type DistributedPodDisruptionBudgetStatus struct {
	// ObservedGeneration is the generation this status was computed for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ChildPDB is the name of the child PodDisruptionBudget.
	ChildPDB string `json:"childPDB,omitempty"`
	// DisruptionsAllowed is what the federation allows now: 0 whenever a
	// member is missing, unreachable or not yet observed.
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
	// DesiredHealthy is how many pods of the federation must stay healthy.
	DesiredHealthy int32 `json:"desiredHealthy"`
	// CurrentHealthy is the healthy pods of this DPDB and all members.
	CurrentHealthy int32 `json:"currentHealthy"`
	// ExpectedPods is the expected pods of this DPDB and all members.
	ExpectedPods int32 `json:"expectedPods"`
	// Federated is "observed/listed" members, as `kubectl get dpdb` shows.
	Federated string `json:"federated,omitempty"`
	// Members is each federated PDB as last observed.
	// +listType=atomic
	Members []MemberStatus `json:"members,omitempty"`
	// Conditions: Ready (the child PDB carries the federation's budget)
	// and Degraded (a member is missing, unreachable or unsure).
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MemberStatus is one federated PDB as the controller last observed it.
type MemberStatus struct {
	FederatedPDB `json:",inline"`
	// Observed is true when the member's status was read and is current.
	Observed bool `json:"observed"`
	// CurrentHealthy and ExpectedPods are the member's PDB status.
	CurrentHealthy int32 `json:"currentHealthy"`
	ExpectedPods   int32 `json:"expectedPods"`
	// ObservedAt is when the member's status was last known current.
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// Message says why the member is not observed.
	Message string `json:"message,omitempty"`
}

// Condition types and reasons of a DistributedPodDisruptionBudget.
const (
	ConditionReady    = "Ready"
	ConditionDegraded = "Degraded"

	ReasonFederated         = "Federated"
	ReasonMemberUnavailable = "MemberUnavailable"
	ReasonChildNotObserved  = "ChildNotObserved"
	ReasonChildConflict     = "ChildConflict"
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonAllMembersHealthy = "AllMembersObserved"
)

// SchemeGroupVersion is the group and version of this package's kinds.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

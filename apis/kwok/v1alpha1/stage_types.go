package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group, version and kind of Stage.
const (
	GroupName    = "kwok.x-k8s.io"
	Version      = "v1alpha1"
	GroupVersion = GroupName + "/" + Version
	StageKind    = "Stage"
)

// StagesResource is where a cluster's Stage objects are served.
var StagesResource = schema.GroupVersionResource{Group: GroupName, Version: Version, Resource: "stages"}

// Stage says: for objects of a kind that match a selector, after a delay,
// apply a change (status, finalizers, deletion, an event).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.resourceRef.kind`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Stage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StageSpec `json:"spec"`
}

// StageList is a list of Stages.
//
// +kubebuilder:object:root=true
type StageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Stage `json:"items"`
}

// StageSpec is what a Stage does.
type StageSpec struct {
	// ResourceRef names the kind of object the stage applies to.
	ResourceRef StageResourceRef `json:"resourceRef"`
	// Selector picks the objects; all of its parts must match.
	Selector *StageSelector `json:"selector,omitempty"`
	// Weight decides among several matching stages: each is chosen with
	// probability weight/sum. Zero counts as the lowest choice.
	// +kubebuilder:validation:Minimum=0
	Weight int `json:"weight,omitempty"`
	// WeightFrom reads the weight from the object, overriding Weight.
	WeightFrom *ExpressionFromSource `json:"weightFrom,omitempty"`
	// Delay is how long to wait before applying Next.
	Delay *StageDelay `json:"delay,omitempty"`
	// Next is the change to make.
	Next StageNext `json:"next"`
	// ImmediateNextStage evaluates the next stage at once on the changed
	// object, without waiting for the change to come back from a watch.
	ImmediateNextStage bool `json:"immediateNextStage,omitempty"`
}

// StageResourceRef is a kind in an API group ("v1" or "" for the core group).
type StageResourceRef struct {
	APIGroup string `json:"apiGroup,omitempty"`
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
}

// StageSelector matches objects by labels, annotations and jq expressions.
type StageSelector struct {
	MatchLabels      map[string]string     `json:"matchLabels,omitempty"`
	MatchAnnotations map[string]string     `json:"matchAnnotations,omitempty"`
	MatchExpressions []SelectorRequirement `json:"matchExpressions,omitempty"`
}

// SelectorRequirement compares what a jq expression (Key) yields from the
// object with Values.
type SelectorRequirement struct {
	// Key is a jq expression, such as .status.phase.
	// +kubebuilder:validation:MinLength=1
	Key      string           `json:"key"`
	Operator SelectorOperator `json:"operator"`
	Values   []string         `json:"values,omitempty"`
}

// SelectorOperator is how a SelectorRequirement compares.
// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
type SelectorOperator string

// The operators of a SelectorRequirement.
const (
	SelectorOpIn           SelectorOperator = "In"
	SelectorOpNotIn        SelectorOperator = "NotIn"
	SelectorOpExists       SelectorOperator = "Exists"
	SelectorOpDoesNotExist SelectorOperator = "DoesNotExist"
)

// ExpressionFromSource is a jq expression evaluated on the object.
type ExpressionFromSource struct {
	ExpressionFrom string `json:"expressionFrom,omitempty"`
}

// StageDelay is the wait before a stage applies: DurationMilliseconds, or,
// with JitterDurationMilliseconds, a time drawn evenly between the two.
type StageDelay struct {
	// +kubebuilder:validation:Minimum=0
	DurationMilliseconds *int64                `json:"durationMilliseconds,omitempty"`
	DurationFrom         *ExpressionFromSource `json:"durationFrom,omitempty"`
	// +kubebuilder:validation:Minimum=0
	JitterDurationMilliseconds *int64                `json:"jitterDurationMilliseconds,omitempty"`
	JitterDurationFrom         *ExpressionFromSource `json:"jitterDurationFrom,omitempty"`
}

// StageNext is the change a stage makes, in this order: event,
// finalizers, deletion, status.
type StageNext struct {
	Event      *StageEvent      `json:"event,omitempty"`
	Finalizers *StageFinalizers `json:"finalizers,omitempty"`
	Delete     bool             `json:"delete,omitempty"`
	// StatusTemplate is a Go template rendering the object's new status
	// (YAML), applied as a patch of the status subresource.
	StatusTemplate string `json:"statusTemplate,omitempty"`
	// Patches are further templated patches.
	Patches []StagePatch `json:"patches,omitempty"`
}

// StageEvent is an Event to record on the object.
type StageEvent struct {
	// +kubebuilder:validation:Enum=Normal;Warning
	Type    string `json:"type,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// StageFinalizers changes the object's finalizers.
type StageFinalizers struct {
	Add    []FinalizerItem `json:"add,omitempty"`
	Remove []FinalizerItem `json:"remove,omitempty"`
	Empty  bool            `json:"empty,omitempty"`
}

// FinalizerItem is one finalizer.
type FinalizerItem struct {
	Value string `json:"value,omitempty"`
}

// StagePatch is a templated patch of the object or a subresource of it.
type StagePatch struct {
	// Subresource to patch, e.g. "status"; empty patches the object.
	Subresource string `json:"subresource,omitempty"`
	// Root wraps the rendered template under this field (e.g. "status").
	Root string `json:"root,omitempty"`
	// Template renders the patch (YAML).
	Template string `json:"template,omitempty"`
	// Type is merge (default for custom resources), strategic (default
	// for built-in kinds) or json.
	Type *StagePatchType `json:"type,omitempty"`
}

// StagePatchType is the kind of patch.
// +kubebuilder:validation:Enum=json;merge;strategic
type StagePatchType string

// The patch types.
const (
	StagePatchTypeJSONPatch           StagePatchType = "json"
	StagePatchTypeMergePatch          StagePatchType = "merge"
	StagePatchTypeStrategicMergePatch StagePatchType = "strategic"
)

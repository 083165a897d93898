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
// apply a change (status, finalizers, deletion, an event, other objects).
// The API is KWOK's, as of its v0.8.0.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.resourceRef.kind`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Stage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StageSpec   `json:"spec"`
	Status            StageStatus `json:"status,omitempty"`
}

// StageStatus is what the simulator reports of a Stage. KWOK writes
// nothing here, and a Stage may select Stages by their status (KWOK's own
// tests select `.status.conditions` DoesNotExist): the simulator adds a
// condition only to a Stage it cannot apply.
type StageStatus struct {
	// ObservedGeneration is the generation of the Stage the simulator last
	// compiled: it applies that generation unless Accepted is False.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Accepted False says the simulator left the Stage out and
	// names the field at fault; it is removed once the Stage compiles. A
	// Stage's own stages may write other conditions here.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StageConditionAccepted is the condition on a Stage the simulator left
// out (status False).
const StageConditionAccepted = "Accepted"

// StageList is a list of Stages.
//
// +kubebuilder:object:root=true
type StageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Stage `json:"items"`
}

// StageSpec is what a Stage does: Steps, or the older Next.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.steps) && size(self.steps) > 0 && has(self.next))",message="spec.steps and spec.next are exclusive: write the change as steps and drop next"
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
	// Delay is how long to wait before applying the change.
	Delay *StageDelay `json:"delay,omitempty"`
	// Steps are the change to make, carried out in order.
	// +kubebuilder:validation:MaxItems=256
	Steps []StageStep `json:"steps,omitempty"`
	// Next is the change to make, in the form before Steps (KWOK
	// deprecates it but keeps it working, and so does kubesim).
	// +optional
	Next StageNext `json:"next,omitzero"`
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

// StageSelector matches objects by labels, annotations and expressions.
type StageSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchAnnotations map[string]string `json:"matchAnnotations,omitempty"`
	// +kubebuilder:validation:MaxItems=256
	MatchExpressions []MatchExpression `json:"matchExpressions,omitempty"`
}

// MatchExpression is one condition an object must meet: a CEL expression
// that must be true, a jq requirement, or (the older form) a jq
// requirement written inline.
//
// +kubebuilder:validation:XValidation:rule="(has(self.cel) ? 1 : 0) + (has(self.jq) ? 1 : 0) + (has(self.key) ? 1 : 0) == 1",message="a matchExpressions item is exactly one of cel, jq or key"
type MatchExpression struct {
	CEL *ExpressionCEL `json:"cel,omitempty"`
	JQ  *SelectorJQ    `json:"jq,omitempty"`
	// Key is a jq expression, such as .status.phase (the form before jq).
	Key      string           `json:"key,omitempty"`
	Operator SelectorOperator `json:"operator,omitempty"`
	Values   []string         `json:"values,omitempty"`
}

// ExpressionCEL is a CEL expression over the object, which it sees as
// self.
type ExpressionCEL struct {
	// +kubebuilder:validation:MinLength=1
	Expression string `json:"expression"`
}

// ExpressionJQ is a jq expression over the object.
type ExpressionJQ struct {
	// +kubebuilder:validation:MinLength=1
	Expression string `json:"expression"`
}

// SelectorJQ compares what a jq expression (Key) yields from the object
// with Values.
type SelectorJQ struct {
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

// ExpressionFromSource reads a value from the object: with CEL, jq, or
// (the form before them) the jq expression ExpressionFrom.
//
// +kubebuilder:validation:XValidation:rule="(has(self.cel) ? 1 : 0) + (has(self.jq) ? 1 : 0) + (has(self.expressionFrom) ? 1 : 0) <= 1",message="set one of cel, jq or expressionFrom"
type ExpressionFromSource struct {
	CEL            *ExpressionCEL `json:"cel,omitempty"`
	JQ             *ExpressionJQ  `json:"jq,omitempty"`
	ExpressionFrom string         `json:"expressionFrom,omitempty"`
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
	// StatusSubresource is where StatusTemplate's patch goes ("status"
	// unless set; "" patches the object itself).
	StatusSubresource *string `json:"statusSubresource,omitempty"`
	// StatusPatchAs makes StatusTemplate's patch as another user.
	StatusPatchAs *ImpersonationConfig `json:"statusPatchAs,omitempty"`
}

// StageStep is one step of a Stage's change: exactly one action.
//
// +kubebuilder:validation:XValidation:rule="(has(self.patch) ? 1 : 0) + (has(self.event) ? 1 : 0) + (has(self.finalizers) ? 1 : 0) + (has(self.delete) && self.delete ? 1 : 0) + (has(self.apply) ? 1 : 0) == 1",message="a step is exactly one of patch, event, finalizers, delete or apply: split it into several steps"
type StageStep struct {
	Patch      *StagePatch      `json:"patch,omitempty"`
	Event      *StageEvent      `json:"event,omitempty"`
	Finalizers *StageFinalizers `json:"finalizers,omitempty"`
	Delete     bool             `json:"delete,omitempty"`
	Apply      *StageApply      `json:"apply,omitempty"`
}

// StageApply creates or updates a whole object rendered from a template:
// created if it does not exist, else patched (server-side apply unless
// Type says otherwise). With Subresource, only that subresource of an
// existing object is patched.
type StageApply struct {
	// Template renders the object (YAML with apiVersion and kind). A
	// namespaced object without a namespace goes in the Stage's object's.
	Template string `json:"template,omitempty"`
	// Subresource, such as "status", patches that of an existing object.
	Subresource string `json:"subresource,omitempty"`
	// Type is apply (server-side apply, the default), merge or strategic.
	// +kubebuilder:validation:Enum=apply;merge;strategic
	Type *StagePatchType `json:"type,omitempty"`
	// Impersonation makes the write as another user.
	Impersonation *ImpersonationConfig `json:"impersonation,omitempty"`
}

// ImpersonationConfig names the user a write is made as.
type ImpersonationConfig struct {
	// +kubebuilder:validation:MinLength=1
	Username string `json:"username"`
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
	// +kubebuilder:validation:Enum=json;merge;strategic
	Type *StagePatchType `json:"type,omitempty"`
	// Impersonation makes the patch as another user.
	Impersonation *ImpersonationConfig `json:"impersonation,omitempty"`
}

// StagePatchType is the kind of patch.
type StagePatchType string

// The patch types.
const (
	StagePatchTypeJSONPatch           StagePatchType = "json"
	StagePatchTypeMergePatch          StagePatchType = "merge"
	StagePatchTypeStrategicMergePatch StagePatchType = "strategic"
	StagePatchTypeApply               StagePatchType = "apply"
)

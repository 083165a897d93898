package clone

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/kubesim/kubesim/internal/snapshot"
)

// A source run by Karpenter has NodePools, NodeClaims, and Nodes owned by
// their NodeClaims. A clone given Karpenter (--autoscaler karpenter) runs
// it with its KWOK provider, which launches nodes of a KWOKNodeClass and
// owns only nodes whose providerID is kwok://NAME. So the clone adopts
// the source's nodes: each NodePool and NodeClaim names a KWOKNodeClass
// of its source node class's name, and each NodeClaim's node is made as
// the provider would have launched it for that claim (providerID
// kwok://NAME, kubesim.io/nodeclaim). Karpenter's launch of the claim
// then finds that node (internal/karpenter's launcher), registers and
// initializes it: the source's nodes are Karpenter's to count, to
// consolidate and to replace, as in the source.

var (
	nodePoolKind  = schema.GroupKind{Group: "karpenter.sh", Kind: "NodePool"}
	nodeClaimKind = schema.GroupKind{Group: "karpenter.sh", Kind: "NodeClaim"}
	kwokNodeClass = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

const (
	kwokProviderPrefix = "kwok://"
	// The KWOK provider's mark on the nodes it launches.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// internal/karpenter's NodeClaimAnnotation: the claim a node was
	// launched for (not imported: that package is Karpenter's whole
	// operator).
	nodeClaimAnnotation = "kubesim.io/nodeclaim"
	// SourceNodeClassAnnotation on a cloned NodePool or NodeClaim is the
	// node class it named in the source ("EC2NodeClass default").
	SourceNodeClassAnnotation = "kubesim.io/source-node-class"
)

// adoption is what a clone that runs Karpenter knows of the source's.
type adoption struct {
	claims map[string]string // a NodeClaim's source uid → its name
	hashes map[string]string // a NodePool's name → its hash, as the clone's Karpenter computes it
}

// prepareAdoption readies the adoption of the source's Karpenter nodes,
// when this cluster runs Karpenter (it serves NodeClaims): the
// KWOKNodeClasses its NodePools will name are made, empty (Karpenter's
// default boot time), unless there already.
func (l *loader) prepareAdoption(ctx context.Context, objects []*unstructured.Unstructured) error {
	if _, err := l.mapper.RESTMapping(nodeClaimKind, "v1"); meta.IsNoMatchError(err) {
		return nil
	} else if err != nil {
		return err
	}
	a := &adoption{claims: map[string]string{}, hashes: map[string]string{}}
	classes := map[string]bool{}
	for _, obj := range objects {
		switch obj.GroupVersionKind().GroupKind() {
		case nodeClaimKind:
			a.claims[obj.GetAnnotations()[snapshot.SourceUIDAnnotation]] = obj.GetName()
		case nodePoolKind:
			if name, ok, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "nodeClassRef", "name"); ok {
				classes[name] = true
			}
		}
	}
	for name := range classes {
		class := &unstructured.Unstructured{}
		class.SetAPIVersion(kwokNodeClass.GroupVersion().String())
		class.SetKind("KWOKNodeClass")
		class.SetName(name)
		_, err := l.client.Resource(kwokNodeClass).Create(ctx, class, metav1.CreateOptions{})
		switch {
		case err == nil:
			l.result.Created["KWOKNodeClass"]++
		case apierrors.IsAlreadyExists(err):
		default:
			return fmt.Errorf("creating KWOKNodeClass %s for the NodePools that name it: %w", name, err)
		}
	}
	l.adoption = a
	return nil
}

// adopt makes obj Karpenter's in this cluster, if it runs Karpenter.
func (l *loader) adopt(obj *unstructured.Unstructured) error {
	a := l.adoption
	if a == nil {
		return nil
	}
	switch obj.GroupVersionKind().GroupKind() {
	case nodePoolKind:
		pointAtKWOK(obj, "spec", "template", "spec", "nodeClassRef")
		np := &karpenterv1.NodePool{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, np); err != nil {
			return err
		}
		hash := np.Hash()
		setHash(obj, hash)
		l.mu.Lock()
		a.hashes[obj.GetName()] = hash
		l.mu.Unlock()
	case nodeClaimKind:
		pointAtKWOK(obj, "spec", "nodeClassRef")
		// The hash of the NodePool as this cluster has it: the source's
		// would differ (its node class), and every claim would be taken
		// for drifted and replaced.
		l.mu.Lock()
		hash, ok := a.hashes[obj.GetLabels()[karpenterv1.NodePoolLabelKey]]
		l.mu.Unlock()
		if ok {
			setHash(obj, hash)
		} else {
			annotations := obj.GetAnnotations()
			delete(annotations, karpenterv1.NodePoolHashAnnotationKey)
			delete(annotations, karpenterv1.NodePoolHashVersionAnnotationKey)
			obj.SetAnnotations(annotations)
		}
	case schema.GroupKind{Kind: "Node"}:
		refs := obj.GetOwnerReferences()
		for i, ref := range refs {
			claim, ok := a.claims[string(ref.UID)]
			if !ok || ref.Kind != nodeClaimKind.Kind {
				continue
			}
			// The claim is made after its node: Karpenter owns the node
			// by it again when it registers the node.
			obj.SetOwnerReferences(append(refs[:i:i], refs[i+1:]...))
			_ = unstructured.SetNestedField(obj.Object, kwokProviderPrefix+obj.GetName(), "spec", "providerID")
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[kwokNodeAnnotation] = "fake"
			annotations[nodeClaimAnnotation] = claim
			obj.SetAnnotations(annotations)
			l.mu.Lock()
			l.result.Adopted++
			l.mu.Unlock()
			break
		}
	}
	return nil
}

// pointAtKWOK makes the node class reference at path a KWOKNodeClass of
// the same name, and records the source's on the object.
func pointAtKWOK(obj *unstructured.Unstructured, path ...string) {
	ref, ok, _ := unstructured.NestedMap(obj.Object, path...)
	if !ok {
		return
	}
	if ref["group"] != kwokNodeClass.Group {
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[SourceNodeClassAnnotation] = fmt.Sprintf("%v %v", ref["kind"], ref["name"])
		obj.SetAnnotations(annotations)
	}
	ref["group"], ref["kind"] = kwokNodeClass.Group, "KWOKNodeClass"
	_ = unstructured.SetNestedMap(obj.Object, ref, path...)
}

func setHash(obj *unstructured.Unstructured, hash string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[karpenterv1.NodePoolHashAnnotationKey] = hash
	annotations[karpenterv1.NodePoolHashVersionAnnotationKey] = karpenterv1.NodePoolHashVersion
	obj.SetAnnotations(annotations)
}

package export

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubesim/kubesim/internal/snapshot"
)

// servedFinalizers are the finalizers a kubesim cluster's controllers
// remove in their time (upstream's controller-manager, the garbage
// collector); any other would hold its object forever in a clone.
var servedFinalizers = map[string]bool{
	"kubernetes.io/pvc-protection":     true,
	"kubernetes.io/pv-protection":      true,
	"kubernetes.io/pv-controller":      true,
	"batch.kubernetes.io/job-tracking": true,
	"foregroundDeletion":               true,
	"orphan":                           true,
}

const (
	lastApplied        = "kubectl.kubernetes.io/last-applied-configuration"
	mirrorAnnotation   = "kubernetes.io/config.mirror"
	configAnnotations  = "kubernetes.io/config."
	revisionHashLabel  = "controller-revision-hash"
	podTemplateHashKey = "pod-template-hash"
)

// strip turns a live object into what a snapshot holds: its uid kept as
// kubesim.io/source-uid, what the API server or the source's controllers
// wrote left out, and nothing a workload's configuration hides in
// (environment, commands).
func strip(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[snapshot.SourceUIDAnnotation] = string(obj.GetUID())
	delete(annotations, lastApplied)
	obj.SetAnnotations(annotations)
	meta := obj.Object["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		delete(meta, f)
	}
	var finalizers []string
	for _, f := range obj.GetFinalizers() {
		if servedFinalizers[f] {
			finalizers = append(finalizers, f)
		}
	}
	obj.SetFinalizers(finalizers)

	switch obj.GetKind() {
	case "Node":
		stripNode(obj)
	case "ResourceClaim":
		// An allocated claim keeps its allocation: the devices its pods hold.
		if _, allocated, _ := unstructured.NestedMap(obj.Object, "status", "allocation"); !allocated {
			delete(obj.Object, "status")
		}
	default:
		delete(obj.Object, "status")
	}
	switch obj.GetKind() {
	case "Pod":
		stripPodSpec(obj.Object["spec"].(map[string]any))
		unmirror(obj)
	case "Service":
		stripService(obj)
	case "ServiceAccount":
		delete(obj.Object, "secrets") // tokens
	case "PersistentVolume":
		unstructured.RemoveNestedField(obj.Object, "spec", "claimRef", "resourceVersion")
	case "ControllerRevision":
		if template, ok, _ := unstructured.NestedMap(obj.Object, "data", "spec", "template"); ok {
			if spec, ok := template["spec"].(map[string]any); ok {
				stripPodSpec(spec)
				_ = unstructured.SetNestedMap(obj.Object, template, "data", "spec", "template")
			}
		}
	}
	if spec := templateSpec(obj); spec != nil {
		stripPodSpec(spec)
	}
}

// templateSpec is the pod spec of a workload's template (nil for other
// kinds), to change in place.
func templateSpec(obj *unstructured.Unstructured) map[string]any {
	path := []string{"spec", "template", "spec"}
	if obj.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	switch obj.GetKind() {
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController":
		spec, _, _ := nestedMapRef(obj.Object, path...)
		return spec
	}
	return nil
}

// nestedMapRef is the map at path itself, not a copy.
func nestedMapRef(obj map[string]any, path ...string) (map[string]any, bool, error) {
	m := obj
	for _, f := range path {
		next, ok := m[f].(map[string]any)
		if !ok {
			return nil, false, nil
		}
		m = next
	}
	return m, true, nil
}

// stripPodSpec leaves out of every container what configures the program
// (environment, command, arguments: often secrets), and the debugging
// containers a pod cannot be created with.
func stripPodSpec(spec map[string]any) {
	delete(spec, "ephemeralContainers")
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok {
				for _, f := range []string{"env", "envFrom", "command", "args"} {
					delete(c, f)
				}
			}
		}
	}
}

// stripNode keeps a node's shape (spec's taints and unschedulable, its
// capacity and allocatable); its addresses and pod CIDRs come from the
// clone's own ranges.
func stripNode(obj *unstructured.Unstructured) {
	for _, f := range []string{"podCIDR", "podCIDRs", "configSource", "externalID"} {
		unstructured.RemoveNestedField(obj.Object, "spec", f)
	}
	status := map[string]any{}
	for _, f := range []string{"capacity", "allocatable"} {
		if v, ok, _ := unstructured.NestedFieldCopy(obj.Object, "status", f); ok {
			status[f] = v
		}
	}
	obj.Object["status"] = status
}

// unmirror makes a mirror pod (a static pod's image in the API) a bare pod
// bound to its node: it takes the node's capacity as the static pod does,
// and no kubelet of the clone would answer for it.
func unmirror(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	if _, mirror := annotations[mirrorAnnotation]; !mirror {
		return
	}
	for key := range annotations {
		if strings.HasPrefix(key, configAnnotations) {
			delete(annotations, key)
		}
	}
	obj.SetAnnotations(annotations)
	var kept []metav1.OwnerReference
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != "Node" {
			kept = append(kept, ref)
		}
	}
	obj.SetOwnerReferences(kept)
}

// isMirror reports whether a live pod is a static pod's mirror.
func isMirror(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetAnnotations()[mirrorAnnotation]
	return ok
}

// stripService leaves the Service's addresses to the clone's range: a
// ClusterIP of the source's would fall outside it. Headless stays headless.
func stripService(obj *unstructured.Unstructured) {
	if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip == "None" {
		return
	}
	for _, f := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
		unstructured.RemoveNestedField(obj.Object, "spec", f)
	}
}

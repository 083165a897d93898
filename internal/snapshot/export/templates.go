package export

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesim/kubesim/internal/snapshot"
)

// carryLiveResources makes each workload's template ask for what its live
// pods ask for, where a production webhook changed them (a sidecar added,
// requests set): in a clone, the replacement of an evicted pod must take
// the room the evicted one took. The template of a ReplicaSet, StatefulSet,
// DaemonSet or ReplicationController takes the containers' resources of its
// first live pod (by name), and the containers the pod has that it lacks.
// The same change goes to what must stay equal to that template for the
// clone's controllers to see nothing to roll out: the Deployment owning a
// ReplicaSet, and the ControllerRevision a StatefulSet's or DaemonSet's pods
// were made from. It returns the workloads changed, as Kind namespace/name.
func carryLiveResources(objects []*unstructured.Unstructured) []string {
	byUID := map[string]*unstructured.Unstructured{}
	podsOf := map[string][]*unstructured.Unstructured{}
	revisionsOf := map[string][]*unstructured.Unstructured{}
	for _, obj := range objects {
		uid := obj.GetAnnotations()[snapshot.SourceUIDAnnotation]
		byUID[uid] = obj
		owner := controllerUID(obj)
		switch obj.GetKind() {
		case "Pod":
			podsOf[owner] = append(podsOf[owner], obj)
		case "ControllerRevision":
			revisionsOf[owner] = append(revisionsOf[owner], obj)
		}
	}
	var changed []string
	for uid, pods := range podsOf {
		workload := byUID[uid]
		if workload == nil {
			continue
		}
		switch workload.GetKind() {
		case "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController":
		default:
			continue
		}
		slices.SortFunc(pods, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
		before, _, _ := unstructured.NestedMap(workload.Object, "spec", "template")
		spec := templateSpec(workload)
		if spec == nil || !carry(spec, pods[0].Object["spec"].(map[string]any)) {
			continue
		}
		touched := workload
		switch workload.GetKind() {
		case "ReplicaSet":
			if d := byUID[controllerUID(workload)]; d != nil && d.GetKind() == "Deployment" {
				if template, _, _ := unstructured.NestedMap(d.Object, "spec", "template"); reflect.DeepEqual(template, withoutHashLabel(before)) {
					copyContainers(templateSpec(d), spec)
					touched = d
				}
			}
		case "StatefulSet", "DaemonSet":
			for _, rev := range revisionsOf[uid] {
				template, ok, _ := unstructured.NestedMap(rev.Object, "data", "spec", "template")
				if !ok {
					continue
				}
				delete(template, "$patch")
				if reflect.DeepEqual(template, before) {
					revSpec, _, _ := nestedMapRef(rev.Object, "data", "spec", "template", "spec")
					copyContainers(revSpec, spec)
				}
			}
		}
		changed = append(changed, touched.GetKind()+" "+snapshot.Name(touched))
	}
	slices.Sort(changed)
	return changed
}

// controllerUID is the uid of obj's controlling owner, if any.
func controllerUID(obj *unstructured.Unstructured) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return string(ref.UID)
		}
	}
	return ""
}

// withoutHashLabel is a ReplicaSet's template as its Deployment has it.
func withoutHashLabel(template map[string]any) map[string]any {
	t := runtime.DeepCopyJSON(template)
	unstructured.RemoveNestedField(t, "metadata", "labels", podTemplateHashKey)
	if labels, _, _ := unstructured.NestedMap(t, "metadata", "labels"); len(labels) == 0 {
		unstructured.RemoveNestedField(t, "metadata", "labels")
	}
	return t
}

// carry gives the template's containers the live pod's resources, and the
// containers the pod has that the template lacks; it reports a change.
func carry(template, pod map[string]any) bool {
	changed := false
	volumes := map[string]bool{}
	vols, _ := template["volumes"].([]any)
	for _, v := range vols {
		if v, ok := v.(map[string]any); ok {
			volumes[v["name"].(string)] = true
		}
	}
	for _, list := range []string{"initContainers", "containers"} {
		have, _ := template[list].([]any)
		live, _ := pod[list].([]any)
		for _, lc := range live {
			lc, ok := lc.(map[string]any)
			if !ok {
				continue
			}
			i := slices.IndexFunc(have, func(c any) bool { return c.(map[string]any)["name"] == lc["name"] })
			if i < 0 {
				added := runtime.DeepCopyJSON(lc)
				// Mounts of volumes an admission plugin added (the
				// service account's token) would not validate.
				mounts, _ := added["volumeMounts"].([]any)
				mounts = slices.DeleteFunc(mounts, func(m any) bool { return !volumes[m.(map[string]any)["name"].(string)] })
				if len(mounts) == 0 {
					delete(added, "volumeMounts")
				} else {
					added["volumeMounts"] = mounts
				}
				have = append(have, added)
				changed = true
				continue
			}
			tc := have[i].(map[string]any)
			if !reflect.DeepEqual(tc["resources"], lc["resources"]) {
				if r, ok := lc["resources"].(map[string]any); ok {
					tc["resources"] = runtime.DeepCopyJSON(r)
				} else {
					delete(tc, "resources")
				}
				changed = true
			}
		}
		if len(have) > 0 {
			template[list] = have
		}
	}
	return changed
}

// copyContainers makes dst's containers src's.
func copyContainers(dst, src map[string]any) {
	for _, list := range []string{"initContainers", "containers"} {
		if c, ok := src[list].([]any); ok {
			dst[list] = runtime.DeepCopyJSONValue(c)
		}
	}
}

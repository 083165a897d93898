package anonymize

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rewrite maps the names and values of one object in place, and reports
// whether its kind is one whose fields this package knows (otherwise only
// its metadata was rewritten).
func (a *Anonymizer) rewrite(o *unstructured.Unstructured) bool {
	gk := o.GroupVersionKind().GroupKind()
	m := o.Object
	name := o.GetName()
	if ownObjects[gk.Kind+" "+o.GetNamespace()+"/"+name] && gk.Group == "" {
		// Made by the cluster itself, of none of the source's names: kept
		// as it is (the clone finds it there already), but for any
		// annotation a user added.
		a.annotations(child(m, "metadata"))
		delete(m, "status")
		return true
	}
	a.meta(child(m, "metadata"))
	spec := child(m, "spec")
	switch gk.Group + "/" + gk.Kind {
	case "/Namespace", "/LimitRange", "scheduling.k8s.io/PriorityClass", "resource.k8s.io/DeviceClass":
	case "/Node":
		a.node(m)
		return true // a Node keeps its status
	case "/Pod":
		a.podSpec(spec)
	case "/Service":
		setValues(spec, "selector", a.value)
		setString(spec, "externalName", a.str)
	case "/ServiceAccount":
		a.names(m, "secrets")
		a.names(m, "imagePullSecrets")
	case "/PersistentVolume":
		a.persistentVolume(spec)
	case "/PersistentVolumeClaim":
		a.claimSpec(spec)
	case "/ReplicationController":
		setValues(spec, "selector", a.value)
		a.podTemplate(child(spec, "template"))
	case "/ResourceQuota":
		for _, e := range items(spec, "scopeSelector", "matchExpressions") {
			// Class names, mapped as the classes are.
			if e["scopeName"] == "PriorityClass" || e["scopeName"] == "VolumeAttributesClass" {
				setStrings(e, "values", a.str)
			}
		}
	case "apps/Deployment", "apps/ReplicaSet", "apps/DaemonSet", "batch/Job":
		a.labelSelector(child(spec, "selector"))
		a.podTemplate(child(spec, "template"))
	case "apps/StatefulSet":
		a.labelSelector(child(spec, "selector"))
		a.podTemplate(child(spec, "template"))
		setString(spec, "serviceName", a.str)
		for _, t := range items(spec, "volumeClaimTemplates") {
			a.meta(child(t, "metadata"))
			a.claimSpec(child(t, "spec"))
		}
	case "apps/ControllerRevision":
		// A StatefulSet's or DaemonSet's revision: its data is a patch
		// replacing the template. Mapped as the workload's template is,
		// it stays byte for byte the patch the workload's controller
		// computes from the mapped workload, which so finds its revision
		// and leaves the pods of it alone.
		a.podTemplate(child(m, "data", "spec", "template"))
	case "batch/CronJob":
		job := child(spec, "jobTemplate")
		a.meta(child(job, "metadata"))
		a.labelSelector(child(job, "spec", "selector"))
		a.podTemplate(child(job, "spec", "template"))
	case "policy/PodDisruptionBudget":
		a.labelSelector(child(spec, "selector"))
	case "policy.kubesim.io/DistributedPodDisruptionBudget":
		a.labelSelector(child(spec, "selector"))
		for _, f := range items(spec, "federation") {
			setString(f, "name", a.str)
			setString(f, "namespace", a.str)
			setString(f, "cluster", a.str)
		}
	case "node.k8s.io/RuntimeClass":
		setValues(child(m, "scheduling"), "nodeSelector", a.value)
		a.tolerations(child(m, "scheduling"))
	case "storage.k8s.io/StorageClass":
		setValues(m, "parameters", a.value)
		for _, t := range items(m, "allowedTopologies") {
			for _, e := range items(t, "matchLabelExpressions") {
				a.expression(e)
			}
		}
	case "storage.k8s.io/CSIDriver":
		// Named after its driver, which is software, not the source's.
		o.SetName(name)
	case "storage.k8s.io/CSINode":
		for _, d := range items(spec, "drivers") {
			setString(d, "nodeID", a.str)
		}
	case "resource.k8s.io/ResourceSlice":
		setString(spec, "nodeName", a.str)
		setString(child(spec, "pool"), "name", a.str)
		a.nodeSelector(child(spec, "nodeSelector"))
	case "resource.k8s.io/ResourceClaim":
		a.claimRequests(spec)
		a.claimAllocation(child(m, "status"))
		return true // an allocated claim keeps its status
	case "resource.k8s.io/ResourceClaimTemplate":
		a.meta(child(spec, "metadata"))
		a.claimRequests(child(spec, "spec"))
	default:
		return false
	}
	// The snapshot format keeps status only for Nodes and ResourceClaims.
	delete(m, "status")
	return true
}

// ownObjects are the objects every cluster (or every kubesim cluster)
// makes itself, by kind and namespace/name: the API server's Service,
// whose labels say it is (component: apiserver), and usage-metrics'
// ExternalName Service of loopback.
var ownObjects = map[string]bool{
	"Service default/kubernetes":                true,
	"Service kube-system/kubesim-usage-metrics": true,
}

// meta maps an object's (or a template's) metadata.
func (a *Anonymizer) meta(m object) {
	setString(m, "name", a.str)
	setString(m, "namespace", a.str)
	setString(m, "generateName", func(gen string) string {
		base := strings.TrimSuffix(gen, "-")
		return a.str(base) + gen[len(base):]
	})
	setValues(m, "labels", a.value)
	a.annotations(m)
	for _, ref := range items(m, "ownerReferences") {
		setString(ref, "name", a.str)
	}
}

// annotations maps metadata's annotations: their values by their keys,
// as labels', and the container named in a key of containerKeys.
func (a *Anonymizer) annotations(m object) {
	values := child(m, "annotations")
	if values == nil {
		return
	}
	mapped := make(object, len(values)) // a new map: a key added while ranging may come up again
	for k, v := range values {
		if s, ok := v.(string); ok {
			mapped[a.annotationKey(k)] = a.value(k, s)
		} else {
			mapped[k] = v
		}
	}
	m["annotations"] = mapped
}

// names maps the name of each reference in the list at m[key]
// (imagePullSecrets, a ServiceAccount's secrets).
func (a *Anonymizer) names(m object, key string) {
	for _, ref := range items(m, key) {
		setString(ref, "name", a.str)
	}
}

func (a *Anonymizer) labelSelector(s object) {
	setValues(s, "matchLabels", a.value)
	for _, e := range items(s, "matchExpressions") {
		a.expression(e)
	}
}

// expression maps the values of a requirement on a label key.
func (a *Anonymizer) expression(e object) {
	key, _ := e["key"].(string)
	setStrings(e, "values", func(v string) string { return a.value(key, v) })
}

func (a *Anonymizer) nodeSelector(s object) {
	for _, t := range items(s, "nodeSelectorTerms") {
		a.nodeSelectorTerm(t)
	}
}

func (a *Anonymizer) nodeSelectorTerm(t object) {
	for _, e := range items(t, "matchExpressions") {
		a.expression(e)
	}
	for _, f := range items(t, "matchFields") {
		if f["key"] == "metadata.name" {
			setStrings(f, "values", a.str)
		}
	}
}

func (a *Anonymizer) tolerations(m object) {
	for _, t := range items(m, "tolerations") {
		key, _ := t["key"].(string)
		setString(t, "value", func(v string) string { return a.value(key, v) })
	}
}

func (a *Anonymizer) node(m object) {
	spec := child(m, "spec")
	setString(spec, "providerID", a.str)
	for _, t := range items(spec, "taints") {
		key, _ := t["key"].(string)
		setString(t, "value", func(v string) string { return a.value(key, v) })
	}
	status := child(m, "status")
	for _, img := range items(status, "images") {
		setStrings(img, "names", a.image)
	}
	for _, addr := range items(status, "addresses") {
		switch addr["type"] {
		case "Hostname", "InternalDNS", "ExternalDNS":
			setString(addr, "address", a.str)
		}
	}
	// Volume handles of the source's disks; a simulated node has none.
	delete(status, "volumesAttached")
	delete(status, "volumesInUse")
}

func (a *Anonymizer) claimSpec(spec object) {
	setString(spec, "storageClassName", a.str)
	setString(spec, "volumeName", a.str)
	setString(spec, "volumeAttributesClassName", a.str)
	a.labelSelector(child(spec, "selector"))
	for _, key := range []string{"dataSource", "dataSourceRef"} {
		setString(child(spec, key), "name", a.str)
		setString(child(spec, key), "namespace", a.str)
	}
}

// pvFields are the fields of a PersistentVolume's spec that are not its
// volume source.
var pvFields = map[string]bool{
	"accessModes": true, "capacity": true, "claimRef": true, "mountOptions": true, "nodeAffinity": true,
	"persistentVolumeReclaimPolicy": true, "storageClassName": true, "volumeMode": true, "volumeAttributesClassName": true,
}

// sourceFields are fields of a volume source that name software or
// settings, not the source's things.
var sourceFields = map[string]bool{"driver": true, "fsType": true, "type": true, "kind": true, "cachingMode": true}

func (a *Anonymizer) persistentVolume(spec object) {
	setString(child(spec, "claimRef"), "name", a.str)
	setString(child(spec, "claimRef"), "namespace", a.str)
	setString(spec, "storageClassName", a.str)
	setString(spec, "volumeAttributesClassName", a.str)
	a.nodeSelector(child(spec, "nodeAffinity", "required"))
	// A volume source (csi, nfs, local, a cloud disk…) holds volume
	// handles, servers, paths and secret names: every string is mapped.
	for k, v := range spec {
		if src, ok := v.(map[string]any); ok && !pvFields[k] {
			a.scrub(src)
		}
	}
}

// scrub maps every string below m but those of sourceFields.
func (a *Anonymizer) scrub(m object) {
	for k, v := range m {
		switch v := v.(type) {
		case string:
			if !sourceFields[k] {
				m[k] = a.str(v)
			}
		case map[string]any:
			a.scrub(v)
		case []any:
			for i, e := range v {
				switch e := e.(type) {
				case string:
					v[i] = a.str(e)
				case map[string]any:
					a.scrub(e)
				}
			}
		}
	}
}

// claimRequests maps the device class names of a ResourceClaim's spec.
func (a *Anonymizer) claimRequests(spec object) {
	for _, r := range items(spec, "devices", "requests") {
		setString(r, "deviceClassName", a.str)
		setString(child(r, "exactly"), "deviceClassName", a.str)
		for _, alt := range items(r, "firstAvailable") {
			setString(alt, "deviceClassName", a.str)
		}
	}
}

// claimAllocation maps an allocated ResourceClaim's status: the pools
// (ResourceSlices name them after their nodes), the node it is bound to,
// and the pods it is reserved for.
func (a *Anonymizer) claimAllocation(status object) {
	alloc := child(status, "allocation")
	for _, r := range items(alloc, "devices", "results") {
		setString(r, "pool", a.str)
	}
	a.nodeSelector(child(alloc, "nodeSelector"))
	for _, r := range items(status, "reservedFor") {
		setString(r, "name", a.str)
	}
	delete(status, "devices") // per-device status a driver reported
}

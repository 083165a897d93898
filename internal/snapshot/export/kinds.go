package export

import "k8s.io/apimachinery/pkg/runtime/schema"

// kind is one kind export reads.
type kind struct {
	schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

func k(group, version, resource, kindName string, namespaced bool) kind {
	return kind{schema.GroupVersionResource{Group: group, Version: version, Resource: resource}, kindName, namespaced}
}

// kinds are read and written in this order, the order a clone creates them
// in: every object after what it refers to. Issue 36's list, with three
// turns for references: Nodes before CSINodes (owned by their Node), PVCs
// before PVs (a PV's claimRef carries its claim's uid), DPDBs before PDBs
// (a DPDB owns its child PDB); ControllerRevisions after the
// StatefulSets and DaemonSets that own them (their pods name them); and
// Karpenter's NodePools before the nodes they label, its NodeClaims last:
// a clone running Karpenter adopts each claim's node when the claim is
// made (clone/karpenter.go), and the node's pods are there by then, so
// it is not taken for empty.
var kinds = []kind{
	k("", "v1", "namespaces", "Namespace", false),
	k("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false),
	k("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false),
	k("storage.k8s.io", "v1", "storageclasses", "StorageClass", false),
	k("storage.k8s.io", "v1", "csidrivers", "CSIDriver", false),
	k("karpenter.sh", "v1", "nodepools", "NodePool", false),
	k("", "v1", "nodes", "Node", false),
	k("storage.k8s.io", "v1", "csinodes", "CSINode", false),
	k("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true),
	k("", "v1", "persistentvolumes", "PersistentVolume", false),
	k("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", false),
	k("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", false),
	k("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", true),
	k("", "v1", "limitranges", "LimitRange", true),
	k("", "v1", "resourcequotas", "ResourceQuota", true),
	k("", "v1", "services", "Service", true),
	k("apps", "v1", "deployments", "Deployment", true),
	k("apps", "v1", "replicasets", "ReplicaSet", true),
	k("apps", "v1", "statefulsets", "StatefulSet", true),
	k("apps", "v1", "daemonsets", "DaemonSet", true),
	k("apps", "v1", "controllerrevisions", "ControllerRevision", true),
	k("batch", "v1", "cronjobs", "CronJob", true),
	k("batch", "v1", "jobs", "Job", true),
	k("", "v1", "replicationcontrollers", "ReplicationController", true),
	k("policy.kubesim.io", "v1alpha1", "distributedpoddisruptionbudgets", "DistributedPodDisruptionBudget", true),
	k("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true),
	k("", "v1", "serviceaccounts", "ServiceAccount", true),
	k("", "v1", "pods", "Pod", true),
	k("karpenter.sh", "v1", "nodeclaims", "NodeClaim", false),
}

// neverRead are kinds export does not read at all, with why, for the
// header's skipped: Secrets and ConfigMaps hold data that is not a
// cluster's shape; a webhook or an aggregated API without its Service
// would fail every write in a clone.
var neverRead = map[string]string{
	"Secret":                         "never read",
	"ConfigMap":                      "never read",
	"MutatingWebhookConfiguration":   "never read (its Service is not cloned; it would block writes)",
	"ValidatingWebhookConfiguration": "never read (its Service is not cloned; it would block writes)",
	"APIService":                     "never read (its Service is not cloned)",
	"CustomResourceDefinition":       "never read (a clone has kubesim's own; custom resources other than Karpenter's NodePools and NodeClaims are not read)",
}

// Package anonymize rewrites the objects of a cluster snapshot so that
// they hold none of the source's names, while the clone made from them
// behaves as the source does: every selector selects the same objects,
// every owner, claim, volume, class and node reference still resolves,
// controllers still recognise what they made, and pods land on the same
// (renamed) nodes.
//
// # How
//
// Every string that may name something goes through one function of the
// string alone, an HMAC-SHA256 under the key: a 10-character token, a
// letter then lowercase letters and digits, valid as a DNS label, a
// DNS-1035 label (Service names) and a label value. Being one function of
// the string, not of where it stands, it maps a Deployment's name, the
// app=<name> label of its pods, their owner references, the Service and
// PodDisruptionBudget selectors on that label, a pod's nodeName and the
// kubernetes.io/hostname label of its node, a namespace and the
// kubernetes.io/metadata.name label, alike. The same key maps a cluster the
// same way every time: two exports with one key can be compared or
// merged. Print the key once (NewKey) and read it back (ParseKey).
//
// Names that controllers derive from other names are rebuilt from the
// mapping of their parts with the generated part kept (derived.go): a
// ReplicaSet <deployment>-<pod-template-hash>, its pods <replicaset>-<random>,
// a StatefulSet's pods <statefulset>-<ordinal> and claims
// <template>-<statefulset>-<ordinal>, a StatefulSet pod's
// controller-revision-hash <statefulset>-<hash>, a CronJob's Jobs, a mirror
// pod <name>-<node>, names from generateName. So pod-template-hash still
// matches, ordinals still count from 0 and a StatefulSet adopts its pods
// and claims.
//
// A StatefulSet's or DaemonSet's ControllerRevision holds a copy of its
// template (a patch): it is mapped as the template is, so the controller,
// comparing the patch it makes of the mapped workload with the revision's,
// finds the revision its pods' controller-revision-hash names, and rolls
// nothing.
//
// Pod volume names are mapped with their mounts: a StatefulSet's claim
// template names both its pods' volumes and their claims. Paths (mounts,
// local and hostPath volumes) become "/" and a token.
//
// Images: the repository (registry and path) is mapped; a tag that is a
// version number (v1.2.3) or "latest" is kept; other tags are mapped; a
// digest becomes a keyed digest of the same form.
//
// # What is kept, and why
//
//   - Keys of labels, annotations, selectors, taints and tolerations, and
//     topology keys: well-known keys carry the meaning the scheduler and
//     controllers act on, and a selector's key must match its labels'.
//     (Custom keys are kept too, so a key's domain prefix stays visible.)
//   - The values of the keys whose meaning is their value (keptValueKeys
//     and keptValuePrefixes in mapping.go, listed with reasons in
//     docs/clone.md): what a node is (every key of a topology.* domain,
//     such as topology.kubernetes.io/zone or a CSI driver's
//     topology.ebs.csi.aws.com/zone, and the failure-domain.beta forms;
//     kubernetes.io/os and /arch, node.kubernetes.io/instance-type and
//     windows-build, feature.node.kubernetes.io/*): they decide where pods
//     fit and spread, and name a provider's regions, not the source's
//     things; policy the API server accepts only in its own words (Pod
//     Security levels and versions, seccomp and AppArmor profiles);
//     settings of upstream's controllers (addonmanager mode, topology
//     mode, fstype); a pod's claim entry name
//     (resource.kubernetes.io/pod-claim-name). Well-known keys whose
//     values name the source's things (app.kubernetes.io/*,
//     kubernetes.io/hostname, kubernetes.io/metadata.name, pod-name,
//     job-name, selected-node) and keys not known here are mapped.
//   - pod-template-hash and controller-revision-hash values (hashes), the
//     kubelet's kubernetes.io/config.* annotations, the volume binder's
//     pv.kubernetes.io/* annotations, CSI driver names
//     (provisioned-by, storage-provisioner, StorageClass provisioners,
//     CSIDriver names, CSINode drivers): software, not the source's.
//   - Values that name nothing: empty, numbers, booleans, durations, RFC
//     3339 times and UIDs (deployment.kubernetes.io/revision,
//     safe-to-evict, kubesim.io/run-duration, restartedAt,
//     kubesim.io/source-uid, which the importer needs), and the values of
//     the simulator's chaos.kubesim.io/ keys (its words for a failure).
//   - The names every cluster has: the namespaces default, kube-system,
//     kube-public and kube-node-lease, the Service kubernetes, the
//     PriorityClasses system-cluster-critical and system-node-critical, the
//     default-scheduler, the service accounts upstream's RBAC bootstrap
//     binds in kube-system (the controllers'), and kubesim's own
//     (kubesim-dpdb, kubesim-usage-metrics). The cluster's own objects
//     (ownObjects: the Services default/kubernetes and
//     kube-system/kubesim-usage-metrics) are kept whole but for their
//     annotations, as a plain export has them: the clone finds them there.
//   - Container port names and a pod's resource claim entry names (local
//     to a pod spec), numbers, quantities, policies and other settings.
//
// Dropped: containers' env, envFrom, command and args (the snapshot
// format strips them already), status except a Node's and a
// ResourceClaim's, and a Node's volumesAttached and volumesInUse (volume
// handles of the source's disks).
//
// Left alone, and so still the source's: label and annotation keys (a
// custom key's domain; but the container a seccomp or AppArmor
// annotation's key names is mapped with the container), the API group
// of a custom resource, probes and lifecycle hooks (their exec commands,
// HTTP paths and hosts), security contexts, a container's workingDir, a DeviceClass's CEL selectors, IP addresses
// (the export replaces nodes' with simulated ones). Objects of kinds this
// package does not know (custom resources) have their metadata mapped
// and the rest left alone; the Summary names them.
package anonymize

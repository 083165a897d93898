package v1alpha1

// Revision numbers the changes to these types that a client writing them
// relies on: it goes up by one whenever Cluster or Scenario gain a field
// that pkg/kubesimtest writes. `kubesim version -o json` reports the
// binary's revision, and kubesimtest refuses a binary whose revision is
// lower than the one it was compiled with, which would reject or ignore
// what it writes.
//
// 1: `kubesim version -o json` and `kubesim get node-template` exist.
// 2: Cluster.NodeGroups.
// 3: Cluster.StageFiles.
// 4: Cluster.From and FromContext (clones), and the same in a Scenario's clusters.
// 5: NodeGroup.Devices (DRA devices published as ResourceSlices).
//
//	Cluster.Usage and HorizontalPodAutoscaler, and the same in a Scenario's clusters.
//
// 6: Cluster.TimeScale (a scaled clock), and the same in a Scenario's clusters;
// ClusterResourceUsage's label selector (matchLabels, matchExpressions),
// which Cluster.SetUsage writes: an older binary's CRD would drop it and
// the usage would cover every pod of the namespace.
// 7: Cluster.Kubernetes (the control plane's version), and the same in a
// Scenario's clusters.
const Revision = 7

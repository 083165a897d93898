package anonymize

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	psapi "k8s.io/pod-security-admission/api"

	"github.com/kubesim/kubesim/internal/snapshot/etcdpods"
)

// objectsOf anonymizes a manifest's objects under the test key.
func objectsOf(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs := decode(t, strings.NewReader(manifest))
	if _, err := New(testKey).Objects(objs); err != nil {
		t.Fatal(err)
	}
	return objs
}

// A namespace's Pod Security levels and versions are policy the API
// server accepts only in its own words: kept, in all three modes, while
// the namespace's name and a well-known-prefix label naming the user's
// application are mapped.
func TestPodSecurityLabelsKept(t *testing.T) {
	objs := objectsOf(t, `
apiVersion: v1
kind: Namespace
metadata:
  name: acme-monitoring
  labels:
    kubernetes.io/metadata.name: acme-monitoring
    app.kubernetes.io/name: acme-shop
    pod-security.kubernetes.io/enforce: privileged
    pod-security.kubernetes.io/enforce-version: latest
    pod-security.kubernetes.io/audit: baseline
    pod-security.kubernetes.io/audit-version: v1.30
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/warn-version: latest
`)
	ns := objs[0]
	labels := ns.GetLabels()
	policy, errs := psapi.PolicyToEvaluate(labels, psapi.Policy{})
	if len(errs) > 0 {
		t.Fatalf("the anonymized namespace's Pod Security labels are refused: %v", errs.ToAggregate())
	}
	want := psapi.Policy{
		Enforce: psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
		Audit:   psapi.LevelVersion{Level: psapi.LevelBaseline, Version: psapi.MajorMinorVersion(1, 30)},
		Warn:    psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()},
	}
	if policy != want {
		t.Errorf("policy %+v, want the source's %+v", policy, want)
	}
	if ns.GetName() == "acme-monitoring" || labels["kubernetes.io/metadata.name"] != ns.GetName() {
		t.Errorf("namespace %q, its name label %q: want the name mapped, and the label with it", ns.GetName(), labels["kubernetes.io/metadata.name"])
	}
	if labels["app.kubernetes.io/name"] == "acme-shop" {
		t.Error("app.kubernetes.io/name kept: it names the user's application")
	}
}

// Which keys' values are kept, exactly: those whose meaning is their
// value (what a node is, policy, settings, software, a pod's claim entry
// name); those of well-known keys that name the source's things, of keys
// not known here (of well-known domains too) and of custom keys are
// mapped.
func TestKeptValueKeys(t *testing.T) {
	kept := map[string]string{
		"topology.kubernetes.io/zone":                    "eu-west-1a",
		"topology.ebs.csi.aws.com/zone":                  "eu-west-1b",
		"kubernetes.io/os":                               "linux",
		"kubernetes.io/arch":                             "arm64",
		"node.kubernetes.io/instance-type":               "m5.2xlarge",
		"node.kubernetes.io/windows-build":               "10.0.17763",
		"feature.node.kubernetes.io/cpu-model.vendor_id": "Intel",
		"pod-security.kubernetes.io/enforce":             "restricted",
		"pod-security.kubernetes.io/enforce-version":     "v1.30",
		"addonmanager.kubernetes.io/mode":                "Reconcile",
		"csi.storage.k8s.io/fstype":                      "xfs",
		"resource.kubernetes.io/pod-claim-name":          "gpu",
		"kwok.x-k8s.io/node":                             "fake",
	}
	mapped := map[string]string{
		"kubernetes.io/hostname":                     "ip-10-0-1-7",
		"app.kubernetes.io/name":                     "acme-shop",
		"app.kubernetes.io/instance":                 "acme-shop-eu",
		"app.kubernetes.io/part-of":                  "acme-store",
		"app.kubernetes.io/managed-by":               "acme-operator",
		"statefulset.kubernetes.io/pod-name":         "acme-db-0",
		"volume.kubernetes.io/selected-node":         "ip-10-0-1-7",
		"example.kubernetes.io/owner":                "team-acme",
		"csi.storage.k8s.io/provisioner-secret-name": "acme-ebs-creds",
		"team": "acme-payments",
	}
	labels := map[string]any{}
	for k, v := range kept {
		labels[k] = v
	}
	for k, v := range mapped {
		labels[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "ip-10-0-1-7", "annotations": labels}}}
	u.SetLabels(nil)
	if _, err := New(testKey).Objects([]*unstructured.Unstructured{u}); err != nil {
		t.Fatal(err)
	}
	got := u.GetAnnotations()
	for k, v := range kept {
		if got[k] != v {
			t.Errorf("%s: %q became %q, want it kept", k, v, got[k])
		}
	}
	for k, v := range mapped {
		if got[k] == v {
			t.Errorf("%s: %q kept, want it mapped", k, v)
		}
	}
	if got["kubernetes.io/hostname"] != u.GetName() || got["volume.kubernetes.io/selected-node"] != u.GetName() {
		t.Errorf("node %s, its hostname %q, a selected-node %q: want them mapped alike", u.GetName(), got["kubernetes.io/hostname"], got["volume.kubernetes.io/selected-node"])
	}
}

// A node agent's pod, as many monitoring stacks ship it (privileged, on
// the host's namespaces, with the deprecated seccomp and AppArmor
// annotations), anonymized, is still a pod the API server takes: the
// profiles are kept and the container the AppArmor key names is mapped
// with the container. Checked by upstream's own create.
func TestAnonymizedPodIsValid(t *testing.T) {
	objs := objectsOf(t, `
apiVersion: v1
kind: Pod
metadata:
  name: acme-node-exporter-x2v9k
  namespace: acme-monitoring
  annotations:
    seccomp.security.alpha.kubernetes.io/pod: runtime/default
    container.seccomp.security.alpha.kubernetes.io/acme-exporter: unconfined
    container.apparmor.security.beta.kubernetes.io/acme-exporter: unconfined
spec:
  nodeName: ip-10-0-1-7
  hostNetwork: true
  hostPID: true
  containers:
  - name: acme-exporter
    image: quay.io/acme/node-exporter:v1.8.0
    securityContext: {privileged: true}
`)
	pod := typed[corev1.Pod](t, objs[0])
	if _, err := etcdpods.Prepare(pod); err != nil {
		t.Fatalf("the anonymized pod is refused: %v", err)
	}
	container := pod.Spec.Containers[0].Name
	if container == "acme-exporter" {
		t.Fatal("the container's name was kept")
	}
	for k, v := range map[string]string{
		"seccomp.security.alpha.kubernetes.io/pod":                    "runtime/default",
		"container.seccomp.security.alpha.kubernetes.io/" + container: "unconfined",
		"container.apparmor.security.beta.kubernetes.io/" + container: "unconfined",
	} {
		if pod.Annotations[k] != v {
			t.Errorf("annotation %s: %q, want %q (annotations %v)", k, pod.Annotations[k], v, pod.Annotations)
		}
	}
}

// The cluster's own objects are as a plain export has them: the API
// server's Service keeps its labels, kubesim's namespace and
// ExternalName Service their names and loopback, the controllers'
// service accounts their names; a user's are mapped.
func TestClusterOwnObjectsKept(t *testing.T) {
	objs := objectsOf(t, `
apiVersion: v1
kind: Service
metadata:
  name: kubernetes
  namespace: default
  labels: {component: apiserver, provider: kubernetes}
  annotations: {acme.example.com/owner: acme-platform}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: kubesim-usage-metrics, namespace: kube-system}
spec: {type: ExternalName, externalName: 127.0.0.1}
---
apiVersion: v1
kind: Service
metadata: {name: acme-mirror, namespace: acme-shop}
spec: {type: ExternalName, externalName: mirror.acme.example.com}
---
apiVersion: v1
kind: Namespace
metadata: {name: kubesim-dpdb, labels: {kubernetes.io/metadata.name: kubesim-dpdb}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployment-controller, namespace: kube-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-scheduler, namespace: kube-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: acme-robot, namespace: kube-system}
`)
	api, metrics, user, dpdb := objs[0], objs[1], objs[2], objs[3]
	if l := api.GetLabels(); l["component"] != "apiserver" || l["provider"] != "kubernetes" || api.GetNamespace() != "default" || api.GetName() != "kubernetes" {
		t.Errorf("the API server's Service: %s/%s %v, want it as the source has it", api.GetNamespace(), api.GetName(), l)
	}
	if a := api.GetAnnotations()["acme.example.com/owner"]; a == "acme-platform" {
		t.Error("a user's annotation on the API server's Service kept")
	}
	if ext, _, _ := unstructured.NestedString(metrics.Object, "spec", "externalName"); metrics.GetName() != "kubesim-usage-metrics" || ext != "127.0.0.1" {
		t.Errorf("usage-metrics' Service: %s → %s, want it as kubesim makes it", metrics.GetName(), ext)
	}
	if ext, _, _ := unstructured.NestedString(user.Object, "spec", "externalName"); user.GetName() == "acme-mirror" || strings.Contains(ext, "acme") {
		t.Errorf("a user's ExternalName Service: %s → %s, want both mapped", user.GetName(), ext)
	}
	if dpdb.GetName() != "kubesim-dpdb" || dpdb.GetLabels()["kubernetes.io/metadata.name"] != "kubesim-dpdb" {
		t.Errorf("kubesim's namespace became %s %v", dpdb.GetName(), dpdb.GetLabels())
	}
	for i, want := range []string{"deployment-controller", "kube-scheduler"} {
		if got := objs[4+i].GetName(); got != want {
			t.Errorf("service account %s became %s, want upstream's name kept", want, got)
		}
	}
	if objs[6].GetName() == "acme-robot" {
		t.Error("a user's service account in kube-system kept its name")
	}
}

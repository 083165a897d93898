package export

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/internal/snapshot"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestStripKeepsShapeAndDropsWhatTheSourceWrote(t *testing.T) {
	pod := obj(t, `
apiVersion: v1
kind: Pod
metadata:
  name: etcd-cp-0
  namespace: kube-system
  uid: u-pod
  resourceVersion: "7"
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: kubelet}]
  finalizers: [example.com/hold, batch.kubernetes.io/job-tracking]
  annotations: {kubernetes.io/config.mirror: abc, kubernetes.io/config.hash: abc, kubectl.kubernetes.io/last-applied-configuration: "{}", team: a}
  ownerReferences: [{apiVersion: v1, kind: Node, name: cp-0, uid: u-node}]
spec:
  nodeName: cp-0
  containers: [{name: etcd, image: etcd, command: [etcd], args: [--x], env: [{name: PASSWORD, value: s3cret}], resources: {requests: {cpu: 100m}}}]
status: {phase: Running}
`)
	strip(pod)
	want := obj(t, `
apiVersion: v1
kind: Pod
metadata:
  name: etcd-cp-0
  namespace: kube-system
  finalizers: [batch.kubernetes.io/job-tracking]
  annotations: {team: a, kubesim.io/source-uid: u-pod}
spec:
  nodeName: cp-0
  containers: [{name: etcd, image: etcd, resources: {requests: {cpu: 100m}}}]
`)
	if !reflect.DeepEqual(pod.Object, want.Object) {
		got, _ := yaml.Marshal(pod.Object)
		t.Errorf("stripped mirror pod:\n%s", got)
	}

	node := obj(t, `
apiVersion: v1
kind: Node
metadata: {name: n1, uid: u-n1, labels: {topology.kubernetes.io/zone: a}}
spec: {podCIDR: 10.1.0.0/24, podCIDRs: [10.1.0.0/24], unschedulable: true, taints: [{key: k, effect: NoSchedule}]}
status: {capacity: {cpu: "4"}, allocatable: {cpu: 3900m}, addresses: [{type: InternalIP, address: 10.9.9.9}], conditions: [{type: Ready, status: "True"}]}
`)
	strip(node)
	if !reflect.DeepEqual(node.Object["status"], map[string]any{"capacity": map[string]any{"cpu": "4"}, "allocatable": map[string]any{"cpu": "3900m"}}) ||
		node.Object["spec"].(map[string]any)["podCIDR"] != nil || node.Object["spec"].(map[string]any)["unschedulable"] != true {
		t.Errorf("stripped node: %v", node.Object)
	}

	svc := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: s, uid: u}, spec: {clusterIP: 10.96.0.9, clusterIPs: [10.96.0.9], ipFamilies: [IPv4], selector: {app: a}}}`)
	headless := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: h, uid: u}, spec: {clusterIP: None, clusterIPs: [None]}}`)
	strip(svc)
	strip(headless)
	if _, ok := svc.Object["spec"].(map[string]any)["clusterIP"]; ok || headless.Object["spec"].(map[string]any)["clusterIP"] != "None" {
		t.Errorf("services: %v %v", svc.Object["spec"], headless.Object["spec"])
	}
}

func TestCarryLiveResourcesIntoReplicaSetAndItsDeployment(t *testing.T) {
	deployment := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, uid: u-d}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {volumes: [{name: data, emptyDir: {}}], containers: [{name: web, image: web, resources: {requests: {cpu: 100m}}}]}
`)
	rs := obj(t, `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-abc, namespace: shop, uid: u-rs, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: u-d, controller: true}]}
spec:
  template:
    metadata: {labels: {app: web, pod-template-hash: abc}}
    spec: {volumes: [{name: data, emptyDir: {}}], containers: [{name: web, image: web, resources: {requests: {cpu: 100m}}}]}
`)
	pod := obj(t, `
apiVersion: v1
kind: Pod
metadata: {name: web-abc-x, namespace: shop, uid: u-p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u-rs, controller: true}]}
spec:
  volumes: [{name: data, emptyDir: {}}, {name: kube-api-access-x, projected: {}}]
  containers:
  - {name: web, image: web, resources: {requests: {cpu: 250m}}}
  - {name: proxy, image: envoy, env: [{name: A, value: b}], resources: {requests: {cpu: 50m}}, volumeMounts: [{name: data, mountPath: /d}, {name: kube-api-access-x, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]}
`)
	objects := []*unstructured.Unstructured{deployment, rs, pod}
	for _, o := range objects {
		strip(o)
	}
	if got := carryLiveResources(objects); !reflect.DeepEqual(got, []string{"Deployment shop/web"}) {
		t.Fatalf("carried: %v", got)
	}
	wantContainers := obj(t, `
containers:
- {name: web, image: web, resources: {requests: {cpu: 250m}}}
- {name: proxy, image: envoy, resources: {requests: {cpu: 50m}}, volumeMounts: [{name: data, mountPath: /d}]}
`).Object["containers"]
	for _, o := range []*unstructured.Unstructured{deployment, rs} {
		if got := templateSpec(o)["containers"]; !reflect.DeepEqual(got, wantContainers) {
			t.Errorf("%s template's containers: %v", o.GetKind(), got)
		}
	}
	if rs.GetAnnotations()[snapshot.SourceUIDAnnotation] != "u-rs" {
		t.Errorf("source uid: %v", rs.GetAnnotations())
	}
}

func TestCarryLiveResourcesIntoStatefulSetAndItsRevision(t *testing.T) {
	set := obj(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop, uid: u-s}
spec:
  template:
    metadata: {creationTimestamp: null, labels: {app: db}}
    spec: {containers: [{name: db, image: db, env: [{name: X, value: "1"}]}]}
`)
	revision := obj(t, `
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: db-7f, namespace: shop, uid: u-r, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u-s, controller: true}]}
data: {spec: {template: {$patch: replace, metadata: {creationTimestamp: null, labels: {app: db}}, spec: {containers: [{name: db, image: db, env: [{name: X, value: "1"}]}]}}}}
revision: 1
`)
	pod := obj(t, `
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: shop, uid: u-p, ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u-s, controller: true}]}
spec: {containers: [{name: db, image: db, resources: {limits: {memory: 1Gi}}}]}
`)
	objects := []*unstructured.Unstructured{set, revision, pod}
	for _, o := range objects {
		strip(o)
	}
	if got := carryLiveResources(objects); !reflect.DeepEqual(got, []string{"StatefulSet shop/db"}) {
		t.Fatalf("carried: %v", got)
	}
	want := []any{map[string]any{"name": "db", "image": "db", "resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}}}}
	revContainers, _, _ := unstructured.NestedSlice(revision.Object, "data", "spec", "template", "spec", "containers")
	if !reflect.DeepEqual(templateSpec(set)["containers"], want) || !reflect.DeepEqual(revContainers, want) {
		t.Errorf("set %v, revision %v", templateSpec(set)["containers"], revContainers)
	}
	if p, _, _ := unstructured.NestedString(revision.Object, "data", "spec", "template", "$patch"); p != "replace" {
		t.Errorf("the revision's $patch went: %v", revision.Object["data"])
	}
}

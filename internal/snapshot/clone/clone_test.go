package clone

import (
	"context"
	"testing"

	dynamicfake "k8s.io/client-go/dynamic/fake"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRepointAtTheClonesUIDs(t *testing.T) {
	l := &loader{uids: map[string]string{"src-rs": "new-rs", "src-claim": "new-claim", "src-job": "new-job"}}
	pod := obj(t, `
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {batch.kubernetes.io/controller-uid: src-job, app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: src-rs, controller: true}, {apiVersion: x/v1, kind: Gone, name: g, uid: src-gone}]
`)
	if dropped := l.repoint(pod); dropped != 1 {
		t.Errorf("dropped %d owner references, want the one to an object not cloned", dropped)
	}
	if refs := pod.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "new-rs" {
		t.Errorf("owners: %v", refs)
	}
	if l := pod.GetLabels(); l["batch.kubernetes.io/controller-uid"] != "new-job" || l["app"] != "web" {
		t.Errorf("labels: %v", l)
	}

	pv := obj(t, `{apiVersion: v1, kind: PersistentVolume, metadata: {name: pv}, spec: {claimRef: {name: c, namespace: d, uid: src-claim}}}`)
	l.repoint(pv)
	if uid, _, _ := unstructured.NestedString(pv.Object, "spec", "claimRef", "uid"); uid != "new-claim" {
		t.Errorf("claimRef uid %q", uid)
	}

	job := obj(t, `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: src-job}}
  template: {metadata: {labels: {batch.kubernetes.io/controller-uid: src-job, controller-uid: src-job, job-name: j}}}
`)
	l.repoint(job)
	if _, ok := job.Object["spec"].(map[string]any)["selector"]; ok {
		t.Errorf("a generated selector left for the API server to make: %v", job.Object["spec"])
	}
	if labels, _, _ := unstructured.NestedStringMap(job.Object, "spec", "template", "metadata", "labels"); len(labels) != 1 || labels["job-name"] != "j" {
		t.Errorf("template labels: %v", labels)
	}

	pvc := obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c, annotations: {pv.kubernetes.io/bind-completed: "yes", team: a}}, spec: {volumeName: pv}}`)
	l.repoint(pvc)
	if a := pvc.GetAnnotations(); len(a) != 1 || a["team"] != "a" {
		t.Errorf("claim annotations: %v", a)
	}
}

// A claim of pods (owned by one, reserved for two) is made without them,
// its pod owner not counted as dropped, and pointed at the clone's pods
// once they are made; a pod not cloned is left out of its reservations.
func TestClaimPointedAtPods(t *testing.T) {
	claim := obj(t, `
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: web-0-gpu
  namespace: shop
  ownerReferences: [{apiVersion: v1, kind: Pod, name: web-0, uid: src-web-0, controller: true}]
status:
  allocation: {devices: {results: [{request: gpu, driver: gpu.kubesim.io, pool: n1, device: gpu-0}]}}
  reservedFor: [{resource: pods, name: web-0, uid: src-web-0}, {resource: pods, name: gone, uid: src-gone}]
`)
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	c, ok := claimOfPods(claim, &meta.RESTMapping{Resource: gvr})
	if !ok || len(c.owners) != 1 || len(c.reservedFor) != 2 {
		t.Fatalf("claim of pods: %v %+v", ok, c)
	}
	l := &loader{uids: map[string]string{}, result: &Result{}}
	if dropped := l.repoint(claim); dropped != 0 || len(claim.GetOwnerReferences()) != 0 {
		t.Errorf("made with owners %v, %d dropped; want none, none dropped", claim.GetOwnerReferences(), dropped)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(claim.Object, "status", "reservedFor"); found {
		t.Error("made with the source's reservations")
	}

	made := claim.DeepCopy()
	made.SetUID("new-claim")
	l.client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ResourceClaimList"}, made)
	l.uids["src-web-0"] = "new-web-0"
	if err := l.pointAtPods(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	got, err := l.client.Resource(gvr).Namespace("shop").Get(context.Background(), "web-0-gpu", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := got.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "new-web-0" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("owners: %v", refs)
	}
	reserved, _, _ := unstructured.NestedSlice(got.Object, "status", "reservedFor")
	if len(reserved) != 1 || reserved[0].(map[string]any)["uid"] != "new-web-0" || reserved[0].(map[string]any)["name"] != "web-0" {
		t.Errorf("reservedFor: %v", reserved)
	}
	if _, found, _ := unstructured.NestedMap(got.Object, "status", "allocation"); !found {
		t.Error("the allocation was lost")
	}
	if l.result.DroppedOwners != 0 {
		t.Errorf("%d owners dropped", l.result.DroppedOwners)
	}
}

// The API server's own Service is left to it (counted as there already),
// with whatever labels the snapshot gave it; any other Service is made.
func TestTheAPIServersServiceIsNotCreated(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ServiceList"})
	l := &loader{client: client, uids: map[string]string{}, result: &Result{Created: map[string]int{}, Existing: map[string]int{}}}
	mapping := &meta.RESTMapping{Resource: gvr, Scope: meta.RESTScopeNamespace}
	for _, manifest := range []string{
		`{apiVersion: v1, kind: Service, metadata: {name: kubernetes, namespace: default, labels: {component: x1k2j3h4g5}}, spec: {ports: [{port: 443}]}}`,
		`{apiVersion: v1, kind: Service, metadata: {name: kubernetes, namespace: shop}, spec: {ports: [{port: 443}]}}`,
	} {
		if err := l.create(context.Background(), mapping, obj(t, manifest)); err != nil {
			t.Fatal(err)
		}
	}
	if l.result.Existing["Service"] != 1 || l.result.Created["Service"] != 1 {
		t.Errorf("existing %v, created %v: want default/kubernetes left to the API server, shop/kubernetes made", l.result.Existing, l.result.Created)
	}
	if _, err := client.Resource(gvr).Namespace("default").Get(context.Background(), "kubernetes", metav1.GetOptions{}); err == nil {
		t.Error("default/kubernetes was created by the clone")
	}
}

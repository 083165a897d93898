package clone

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

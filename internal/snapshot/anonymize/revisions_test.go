package anonymize

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/history"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/utils/ptr"
)

// An anonymized StatefulSet and DaemonSet still match their revisions as
// their controllers match them (the patch of the template, byte for byte:
// upstream's daemon.Match), and their pods' controller-revision-hash
// still names that revision; the revisions hold none of the source's
// names.
func TestRevisionsMatchTheirWorkloads(t *testing.T) {
	labels := map[string]string{"app": "ledger-db", "team": "payments"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"owner": "payments-oncall"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "ledger",
			NodeSelector:       map[string]string{"pool": "databases"},
			Containers: []corev1.Container{{Name: "postgres", Image: "registry.corp.example/ledger/postgres:16-corp",
				Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "ledger-data", MountPath: "/var/lib/ledger"}}}},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
		},
	}
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "ledger-db", Namespace: "payments", UID: "sts-uid"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), ServiceName: "ledger-db", Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "ledger-data"}}}},
	}
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "ledger-agent", Namespace: "payments", UID: "ds-uid"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: *template.DeepCopy()},
	}
	stsRev := revisionOf(t, sts, &sts.Spec.Template, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	dsRev := revisionOf(t, ds, &ds.Spec.Template, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))
	// A DaemonSet's controller labels its revisions as its pods.
	dsRev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = dsRev.Labels[history.ControllerRevisionHashLabel]
	delete(dsRev.Labels, history.ControllerRevisionHashLabel)
	if ok, err := daemon.Match(ds, dsRev); !ok || err != nil {
		t.Fatalf("the fixture's DaemonSet revision is not what its controller makes: %v", err)
	}
	stsPod := revisionPod(sts.Name+"-0", sts.Namespace, labels, stsRev.Name, metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet")))
	dsPod := revisionPod(ds.Name+"-x7k2p", ds.Namespace, labels, dsRev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey], metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet")))

	var objs []*unstructured.Unstructured
	for _, o := range []runtime.Object{sts, ds, stsRev, dsRev, stsPod, dsPod} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	// As a snapshot file holds them: JSON numbers, no Go types.
	objs = roundTrip(t, objs)
	if _, err := New(testKey).Objects(objs); err != nil {
		t.Fatal(err)
	}
	objs = roundTrip(t, objs)

	gotSts, gotDS := typed[appsv1.StatefulSet](t, objs[0]), typed[appsv1.DaemonSet](t, objs[1])
	gotStsRev, gotDSRev := typed[appsv1.ControllerRevision](t, objs[2]), typed[appsv1.ControllerRevision](t, objs[3])
	gotStsPod, gotDSPod := typed[corev1.Pod](t, objs[4]), typed[corev1.Pod](t, objs[5])
	gotStsRev.Data.Raw, _ = json.Marshal(objs[2].Object["data"]) // as the API server stores it
	gotDSRev.Data.Raw, _ = json.Marshal(objs[3].Object["data"])

	if ok, err := daemon.Match(gotDS, gotDSRev); !ok || err != nil {
		t.Errorf("the anonymized DaemonSet does not match its anonymized revision (%v):\n%s", err, gotDSRev.Data.Raw)
	}
	// The StatefulSet controller's patch is the same replacement of the
	// template (its getPatch is not exported): match it as a DaemonSet's.
	if ok, err := daemon.Match(&appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: gotSts.Spec.Template}}, gotStsRev); !ok || err != nil {
		t.Errorf("the anonymized StatefulSet does not match its anonymized revision (%v):\n%s", err, gotStsRev.Data.Raw)
	}
	if applied, err := statefulset.ApplyRevision(gotSts, gotStsRev); err != nil || applied.Spec.Template.Spec.Containers[0].Image != gotSts.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("the StatefulSet's revision does not restore its template: %v", err)
	}
	if gotStsPod.Labels[appsv1.ControllerRevisionHashLabelKey] != gotStsRev.Name {
		t.Errorf("the StatefulSet's pod has controller-revision-hash %q, its revision is %q", gotStsPod.Labels[appsv1.ControllerRevisionHashLabelKey], gotStsRev.Name)
	}
	if got, want := gotDSPod.Labels[appsv1.ControllerRevisionHashLabelKey], gotDSRev.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; got != want || got == "" {
		t.Errorf("the DaemonSet's pod has controller-revision-hash %q, its revision %q", got, want)
	}
	for _, rev := range []*appsv1.ControllerRevision{gotStsRev, gotDSRev} {
		text := string(rev.Data.Raw) + strings.Join(mapValues(rev.Labels), " ") + rev.Name
		for _, source := range []string{"ledger", "payments", "databases", "corp", "postgres"} {
			if strings.Contains(text, source) {
				t.Errorf("revision %s holds the source's %q: %s", rev.Name, source, text)
			}
		}
	}
}

// revisionOf is the revision a workload's controller makes of its
// template: the patch replacing it, named <workload>-<hash>.
func revisionOf(t *testing.T, parent metav1.Object, template *corev1.PodTemplateSpec, kind schema.GroupVersionKind) *appsv1.ControllerRevision {
	t.Helper()
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(template)
	if err != nil {
		t.Fatal(err)
	}
	tmpl["$patch"] = "replace"
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := history.NewControllerRevision(parent, kind, template.Labels, runtime.RawExtension{Raw: patch}, 1, ptr.To[int32](0))
	if err != nil {
		t.Fatal(err)
	}
	rev.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"}
	rev.Namespace = parent.GetNamespace()
	return rev
}

func revisionPod(name, ns string, labels map[string]string, hash string, owner *metav1.OwnerReference) *corev1.Pod {
	l := map[string]string{appsv1.ControllerRevisionHashLabelKey: hash}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l, OwnerReferences: []metav1.OwnerReference{*owner}},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "postgres", Image: "registry.corp.example/ledger/postgres:16-corp"}}},
	}
}

// roundTrip writes the objects as JSON and reads them back.
func roundTrip(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

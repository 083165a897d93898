package anonymize

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// markers: every source name of the fixture holds one of these.
var markers = []string{"acme", "payments", "ledger", "checkout", "nightly", "reconcile", "ip-10", "ec2", "123456789012", "vol-0"}

// keptKeys are the label and annotation keys whose values the package
// documents as kept.
var keptKeys = regexp.MustCompile(`^(topology\.[^/]*/.*|kubernetes\.io/(os|arch|config\..*)|node\.kubernetes\.io/instance-type|` +
	`pod-template-hash|controller-revision-hash|pv\.kubernetes\.io/.*|kubesim\.io/source-uid|.*/cronjob-scheduled-timestamp|kubectl\.kubernetes\.io/restartedAt)$`)

// keptNames are the source's names the package documents as kept.
var keptNamesInFixture = map[string]bool{"kube-system": true, "system-node-critical": true, "ebs.csi.aws.com": true}

// sourceStrings are the fixture's names, namespaces, label and annotation
// values and images, but those kept on purpose.
func sourceStrings(v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch {
			case k == "metadata":
				meta, _ := e.(map[string]any)
				for _, f := range []string{"name", "namespace", "generateName"} {
					if s, _ := meta[f].(string); s != "" && !keptNamesInFixture[s] {
						out[s] = true
					}
				}
				for _, f := range []string{"labels", "annotations"} {
					values, _ := meta[f].(map[string]any)
					for key, s := range values {
						if !keptKeys.MatchString(key) && !keptNamesInFixture[s.(string)] {
							out[s.(string)] = true
						}
					}
				}
			case k == "image":
				out[e.(string)] = true
			}
			sourceStrings(e, out)
		}
	case []any:
		for _, e := range v {
			sourceStrings(e, out)
		}
	}
}

// (1) None of the source's names is left: no marker word anywhere in the
// output, and no name, namespace, label or annotation value or image of
// the source as a value or within one.
func TestNoSourceNameLeft(t *testing.T) {
	src := map[string]bool{}
	for _, o := range load(t) {
		sourceStrings(o.Object, src)
	}
	out, _ := anonymized(t, testKey)
	var values []string
	for _, o := range out {
		leaves(o.Object, &values)
	}
	text := dump(t, out)
	for _, line := range strings.Split(text, "\n") {
		for _, m := range markers {
			if strings.Contains(line, m) {
				t.Errorf("%q left in %q", m, strings.TrimSpace(line))
			}
		}
	}
	for _, v := range values {
		if src[v] && !namesNothing(v) {
			t.Errorf("source value %q left as it was", v)
		}
	}
	for s := range src {
		if len(s) >= 6 && !namesNothing(s) && strings.Contains(text, s) {
			t.Errorf("source string %q left within the output", s)
		}
	}
	if len(src) < 60 {
		t.Fatalf("only %d source strings collected: the check checks little", len(src))
	}
}

// What the package keeps on purpose is still there.
func TestKeptValues(t *testing.T) {
	out, _ := anonymized(t, testKey)
	nodes := ofKind[corev1.Node](t, out, "Node")
	zones := map[string]bool{}
	for _, n := range nodes {
		zones[n.Labels["topology.kubernetes.io/zone"]] = true
		if n.Labels["kubernetes.io/os"] != "linux" || !strings.HasPrefix(n.Labels["node.kubernetes.io/instance-type"], "m5.") {
			t.Errorf("node %s lost its os or instance type: %v", n.Name, n.Labels)
		}
		if len(n.Status.VolumesInUse) > 0 || n.Status.Capacity.Cpu().IsZero() {
			t.Errorf("node %s: volumesInUse %v kept or capacity %v lost", n.Name, n.Status.VolumesInUse, n.Status.Capacity)
		}
	}
	if !maps.Equal(zones, map[string]bool{"us-east-1a": true, "us-east-1b": true, "us-east-1c": true}) {
		t.Errorf("zones %v, want the source's", zones)
	}
	for _, o := range out {
		if o.GetAnnotations()["kubesim.io/source-uid"] == "" {
			t.Errorf("%s %s lost its source-uid", o.GetKind(), o.GetName())
		}
		if o.GetKind() == "Pod" {
			if _, ok := o.Object["status"]; ok {
				t.Errorf("pod %s kept its status", o.GetName())
			}
		}
		if o.GetKind() == "CSIDriver" && o.GetName() != "ebs.csi.aws.com" {
			t.Errorf("CSIDriver renamed %s", o.GetName())
		}
	}
	for _, d := range ofKind[appsv1.Deployment](t, out, "Deployment") {
		c := d.Spec.Template.Spec.Containers[0]
		if len(c.Env)+len(c.EnvFrom)+len(c.Command)+len(c.Args) > 0 {
			t.Errorf("container %s kept env, command or args", c.Name)
		}
		if !strings.HasSuffix(c.Image, ":v2.14.1") || d.Annotations["deployment.kubernetes.io/revision"] != "7" {
			t.Errorf("image %s or revision %q lost", c.Image, d.Annotations["deployment.kubernetes.io/revision"])
		}
	}
}

func sourceUID(o metav1.Object) string { return o.GetAnnotations()["kubesim.io/source-uid"] }

// selections is, for every selector and node constraint in objs, what it
// selects, by source uid: comparing it before and after shows selectors
// select the same objects under their new names.
func selections(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	pods := ofKind[corev1.Pod](t, objs, "Pod")
	nodes := ofKind[corev1.Node](t, objs, "Node")
	namespaces := ofKind[corev1.Namespace](t, objs, "Namespace")
	out := map[string][]string{}
	record := func(what string, picked []string) {
		slices.Sort(picked)
		out[what] = picked
	}
	selectPods := func(what string, nss []string, sel labels.Selector) {
		var picked []string
		for _, p := range pods {
			if slices.Contains(nss, p.Namespace) && sel.Matches(labels.Set(p.Labels)) {
				picked = append(picked, sourceUID(p))
			}
		}
		record(what, picked)
	}
	selector := func(s *metav1.LabelSelector) labels.Selector {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	selectNodes := func(what string, ok func(*corev1.Node) bool) {
		var picked []string
		for _, n := range nodes {
			if ok(n) {
				picked = append(picked, sourceUID(n))
			}
		}
		record(what, picked)
	}
	// podSpec records what a pod (or template) of namespace ns may run on
	// and what its spread and affinity terms count.
	podSpec := func(id, ns string, labelSet map[string]string, spec corev1.PodSpec) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: labelSet}, Spec: spec}
		selectNodes(id+" fits", func(n *corev1.Node) bool {
			match, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n)
			_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, spec.Tolerations,
				func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoSchedule }, false)
			return err == nil && match && !untolerated
		})
		if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
			for i, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				sel, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{p.Preference}})
				if err != nil {
					t.Fatal(err)
				}
				selectNodes(fmt.Sprintf("%s prefers %d", id, i), sel.Match)
			}
		}
		for i, c := range spec.TopologySpreadConstraints {
			selectPods(fmt.Sprintf("%s spreads %d", id, i), []string{ns}, selector(c.LabelSelector))
		}
		var terms []corev1.PodAffinityTerm
		if a := spec.Affinity; a != nil {
			if pa := a.PodAffinity; pa != nil {
				terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
				for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
					terms = append(terms, w.PodAffinityTerm)
				}
			}
			if aa := a.PodAntiAffinity; aa != nil {
				terms = append(terms, aa.RequiredDuringSchedulingIgnoredDuringExecution...)
				for _, w := range aa.PreferredDuringSchedulingIgnoredDuringExecution {
					terms = append(terms, w.PodAffinityTerm)
				}
			}
		}
		for i, term := range terms {
			nss := term.Namespaces
			if term.NamespaceSelector != nil {
				sel := selector(term.NamespaceSelector)
				for _, n := range namespaces {
					if sel.Matches(labels.Set(n.Labels)) {
						nss = append(nss, n.Name)
					}
				}
			}
			if len(nss) == 0 {
				nss = []string{ns}
			}
			selectPods(fmt.Sprintf("%s affinity term %d", id, i), nss, selector(term.LabelSelector))
		}
	}
	for _, p := range pods {
		podSpec("pod "+sourceUID(p), p.Namespace, p.Labels, p.Spec)
	}
	workload := func(kind string, o metav1.Object, sel *metav1.LabelSelector, tmpl corev1.PodTemplateSpec) {
		id := kind + " " + sourceUID(o)
		selectPods(id+" selector", []string{o.GetNamespace()}, selector(sel))
		if !selector(sel).Matches(labels.Set(tmpl.Labels)) {
			t.Errorf("%s %s: its selector does not select its template", id, o.GetName())
		}
		podSpec(id+" template", o.GetNamespace(), tmpl.Labels, tmpl.Spec)
	}
	for _, d := range ofKind[appsv1.Deployment](t, objs, "Deployment") {
		workload("Deployment", d, d.Spec.Selector, d.Spec.Template)
	}
	for _, r := range ofKind[appsv1.ReplicaSet](t, objs, "ReplicaSet") {
		workload("ReplicaSet", r, r.Spec.Selector, r.Spec.Template)
	}
	for _, s := range ofKind[appsv1.StatefulSet](t, objs, "StatefulSet") {
		workload("StatefulSet", s, s.Spec.Selector, s.Spec.Template)
	}
	for _, d := range ofKind[appsv1.DaemonSet](t, objs, "DaemonSet") {
		workload("DaemonSet", d, d.Spec.Selector, d.Spec.Template)
	}
	for _, j := range ofKind[batchv1.Job](t, objs, "Job") {
		workload("Job", j, j.Spec.Selector, j.Spec.Template)
	}
	for _, s := range ofKind[corev1.Service](t, objs, "Service") {
		selectPods("service "+sourceUID(s), []string{s.Namespace}, labels.SelectorFromSet(s.Spec.Selector))
	}
	for _, p := range ofKind[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget") {
		selectPods("pdb "+sourceUID(p), []string{p.Namespace}, selector(p.Spec.Selector))
	}
	for _, d := range ofKind[policyv1alpha1.DistributedPodDisruptionBudget](t, objs, "DistributedPodDisruptionBudget") {
		nss := []string{d.Namespace}
		for _, f := range d.Spec.Federation {
			nss = append(nss, f.Namespace)
		}
		selectPods("dpdb "+sourceUID(d), nss, selector(d.Spec.Selector))
	}
	for _, pv := range ofKind[corev1.PersistentVolume](t, objs, "PersistentVolume") {
		sel, err := nodeaffinity.NewNodeSelector(pv.Spec.NodeAffinity.Required)
		if err != nil {
			t.Fatal(err)
		}
		selectNodes("pv "+sourceUID(pv), sel.Match)
	}
	for _, sc := range ofKind[storagev1.StorageClass](t, objs, "StorageClass") {
		selectNodes("storageclass "+sourceUID(sc), func(n *corev1.Node) bool {
			for _, term := range sc.AllowedTopologies {
				for _, e := range term.MatchLabelExpressions {
					if !slices.Contains(e.Values, n.Labels[e.Key]) {
						return false
					}
				}
			}
			return true
		})
	}
	for _, o := range objs {
		if o.GetKind() == "RuntimeClass" {
			sel, _, _ := unstructured.NestedStringMap(o.Object, "scheduling", "nodeSelector")
			selectNodes("runtimeclass "+sourceUID(o), func(n *corev1.Node) bool { return labels.SelectorFromSet(sel).Matches(labels.Set(n.Labels)) })
		}
	}
	return out
}

// (2a) Every selector and node constraint selects the same objects.
func TestSelectorsSelectTheSame(t *testing.T) {
	before := selections(t, load(t))
	out, _ := anonymized(t, testKey)
	after := selections(t, out)
	for what, want := range before {
		if !slices.Equal(after[what], want) {
			t.Errorf("%s selects %v, want %v", what, after[what], want)
		}
	}
	picked := 0
	for _, p := range before {
		if len(p) > 0 {
			picked++
		}
	}
	if len(before) != len(after) || picked < 30 {
		t.Errorf("%d selections before, %d after, %d selecting something: the fixture checks too little", len(before), len(after), picked)
	}
}

// (2b) Every reference resolves, and the names controllers derive are
// still derived from their owners' names.
func TestReferencesResolve(t *testing.T) {
	out, _ := anonymized(t, testKey)
	exists := map[string]bool{} // kind/namespace/name
	for _, o := range out {
		exists[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	must := func(kind, ns, name, by string) {
		t.Helper()
		if name != "" && !exists[kind+"/"+ns+"/"+name] {
			t.Errorf("%s: %s %s/%s not found", by, kind, ns, name)
		}
	}
	for _, o := range out {
		by := o.GetKind() + " " + o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			must("Namespace", "", ns, by)
		}
		for _, ref := range o.GetOwnerReferences() {
			ns := o.GetNamespace()
			if ref.Kind == "Node" {
				ns = ""
			}
			must(ref.Kind, ns, ref.Name, by)
		}
	}
	podRefs := func(by, ns string, spec corev1.PodSpec) {
		must("Node", "", spec.NodeName, by)
		if spec.ServiceAccountName != "default" {
			must("ServiceAccount", ns, spec.ServiceAccountName, by)
		}
		if !strings.HasPrefix(spec.PriorityClassName, "system-") {
			must("PriorityClass", "", spec.PriorityClassName, by)
		}
		if spec.RuntimeClassName != nil {
			must("RuntimeClass", "", *spec.RuntimeClassName, by)
		}
		volumes := map[string]bool{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = true
			if v.PersistentVolumeClaim != nil {
				must("PersistentVolumeClaim", ns, v.PersistentVolumeClaim.ClaimName, by)
			}
		}
		for _, c := range spec.Containers {
			for _, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					t.Errorf("%s: container %s mounts %s, not a volume of the pod", by, c.Name, m.Name)
				}
			}
		}
	}
	for _, p := range ofKind[corev1.Pod](t, out, "Pod") {
		podRefs("pod "+p.Name, p.Namespace, p.Spec)
	}
	for _, d := range ofKind[appsv1.Deployment](t, out, "Deployment") {
		podRefs("deployment "+d.Name, d.Namespace, d.Spec.Template.Spec)
		names := []string{}
		for _, c := range d.Spec.Template.Spec.Containers {
			names = append(names, c.Name)
		}
		if dc := d.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; !slices.Contains(names, dc) {
			t.Errorf("default-container %q is none of %v", dc, names)
		}
	}
	for _, pv := range ofKind[corev1.PersistentVolume](t, out, "PersistentVolume") {
		must("PersistentVolumeClaim", pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, "pv "+pv.Name)
		must("StorageClass", "", pv.Spec.StorageClassName, "pv "+pv.Name)
	}
	for _, c := range ofKind[corev1.PersistentVolumeClaim](t, out, "PersistentVolumeClaim") {
		must("PersistentVolume", "", c.Spec.VolumeName, "pvc "+c.Name)
		must("StorageClass", "", *c.Spec.StorageClassName, "pvc "+c.Name)
		must("Node", "", c.Annotations["volume.kubernetes.io/selected-node"], "pvc "+c.Name)
	}
	for _, n := range ofKind[corev1.Node](t, out, "Node") {
		if n.Labels["kubernetes.io/hostname"] != n.Name {
			t.Errorf("node %s: hostname label %q", n.Name, n.Labels["kubernetes.io/hostname"])
		}
	}
	for _, o := range out {
		if o.GetKind() == "CSINode" {
			must("Node", "", o.GetName(), "csinode")
		}
	}
	for _, n := range ofKind[corev1.Namespace](t, out, "Namespace") {
		if n.Labels["kubernetes.io/metadata.name"] != n.Name {
			t.Errorf("namespace %s: metadata.name label %q", n.Name, n.Labels["kubernetes.io/metadata.name"])
		}
	}
	for _, q := range ofKind[corev1.ResourceQuota](t, out, "ResourceQuota") {
		for _, pc := range q.Spec.ScopeSelector.MatchExpressions[0].Values {
			must("PriorityClass", "", pc, "quota "+q.Name)
		}
	}
	for _, d := range ofKind[policyv1alpha1.DistributedPodDisruptionBudget](t, out, "DistributedPodDisruptionBudget") {
		for _, f := range d.Spec.Federation {
			if f.Cluster == "" {
				must("PodDisruptionBudget", f.Namespace, f.Name, "dpdb "+d.Name)
			}
		}
	}

	// Derived names.
	for _, s := range ofKind[appsv1.StatefulSet](t, out, "StatefulSet") {
		must("Service", s.Namespace, s.Spec.ServiceName, "statefulset "+s.Name)
		tmpl := s.Spec.VolumeClaimTemplates[0].Name
		for _, p := range ofKind[corev1.Pod](t, out, "Pod") {
			if !metav1.IsControlledBy(p, s) && (len(p.OwnerReferences) == 0 || p.OwnerReferences[0].Name != s.Name) {
				continue
			}
			ord := p.Labels["apps.kubernetes.io/pod-index"]
			claim := tmpl + "-" + s.Name + "-" + ord
			if p.Name != s.Name+"-"+ord || p.Labels["statefulset.kubernetes.io/pod-name"] != p.Name || p.Spec.Hostname != p.Name ||
				p.Spec.Subdomain != s.Spec.ServiceName || !strings.HasPrefix(p.Labels["controller-revision-hash"], s.Name+"-") {
				t.Errorf("statefulset %s: pod %s (labels %v, hostname %s.%s) not derived from it", s.Name, p.Name, p.Labels, p.Spec.Hostname, p.Spec.Subdomain)
			}
			if p.Spec.Volumes[0].Name != tmpl || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != claim {
				t.Errorf("statefulset %s: pod %s's volume %+v, want %s from claim %s", s.Name, p.Name, p.Spec.Volumes[0], tmpl, claim)
			}
			must("PersistentVolumeClaim", s.Namespace, claim, "statefulset "+s.Name)
		}
	}
	for _, rs := range ofKind[appsv1.ReplicaSet](t, out, "ReplicaSet") {
		owner := rs.OwnerReferences[0].Name
		if hash := rs.Labels["pod-template-hash"]; rs.Name != owner+"-"+hash || rs.Spec.Selector.MatchLabels["pod-template-hash"] != hash {
			t.Errorf("replicaset %s: not <deployment %s>-<hash %s>", rs.Name, owner, hash)
		}
	}
	jobs := ofKind[batchv1.Job](t, out, "Job")
	for _, p := range ofKind[corev1.Pod](t, out, "Pod") {
		for _, ref := range p.OwnerReferences {
			switch ref.Kind {
			case "ReplicaSet", "DaemonSet", "Job":
				if p.GenerateName != ref.Name+"-" || !regexp.MustCompile(`^`+regexp.QuoteMeta(ref.Name)+`-[a-z0-9]{5}$`).MatchString(p.Name) {
					t.Errorf("pod %s (generateName %s): not <%s %s>-<suffix>", p.Name, p.GenerateName, ref.Kind, ref.Name)
				}
			case "Node":
				if !strings.HasSuffix(p.Name, "-"+p.Spec.NodeName) {
					t.Errorf("mirror pod %s: not <name>-<node %s>", p.Name, p.Spec.NodeName)
				}
			}
			if ref.Kind == "Job" && (p.Labels["job-name"] != ref.Name || p.Labels["batch.kubernetes.io/job-name"] != ref.Name) {
				t.Errorf("pod %s: job-name labels %v, want %s", p.Name, p.Labels, ref.Name)
			}
		}
	}
	for _, j := range jobs {
		if owner := j.OwnerReferences[0].Name; !regexp.MustCompile(`^` + owner + `-[0-9]+$`).MatchString(j.Name) {
			t.Errorf("job %s: not <cronjob %s>-<minute>", j.Name, owner)
		}
	}
}

// (3) The mapping is a function of the key and the objects: the same key
// gives the same file whatever the objects' order; another key another.
func TestDeterministicForAKey(t *testing.T) {
	first, sum := anonymized(t, testKey)
	second, _ := anonymized(t, testKey)
	if dump(t, first) != dump(t, second) {
		t.Error("two runs with one key differ")
	}
	shuffled := load(t)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if _, err := New(testKey).Objects(shuffled); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(shuffled, func(a, b *unstructured.Unstructured) int { return strings.Compare(sourceUID(a), sourceUID(b)) })
	sorted := slices.Clone(first)
	slices.SortStableFunc(sorted, func(a, b *unstructured.Unstructured) int { return strings.Compare(sourceUID(a), sourceUID(b)) })
	if dump(t, shuffled) != dump(t, sorted) {
		t.Error("the objects' order changed the mapping")
	}

	key, printed := NewKey()
	other, _ := anonymized(t, key)
	same := 0
	for i := range first {
		if first[i].GetName() == other[i].GetName() && !keptNamesInFixture[first[i].GetName()] {
			same++
			t.Errorf("%s %s: the same name under two keys", first[i].GetKind(), first[i].GetName())
		}
	}
	parsed, err := ParseKey(printed)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := anonymized(t, parsed)
	if dump(t, again) != dump(t, other) {
		t.Error("the printed key, read back, maps differently")
	}
	if sum.Rewritten["Pod"] != 7 || sum.MetadataOnly["Widget.widgets.example.com"] != 1 || sum.Names < 50 || sum.Ambiguous != 0 {
		t.Errorf("summary %+v", sum)
	}
	if s := sum.String(); !strings.Contains(s, "7 Pod") || !strings.Contains(s, "only: 1 Widget.widgets.example.com") {
		t.Errorf("summary line %q", s)
	}
}

// (4) Every name keeps the shape of the source's (DNS-1123 subdomain or
// label, DNS-1035 label for Services) and every label value and selector
// value stays valid, as every image reference.
func TestNamesStayValid(t *testing.T) {
	src := load(t)
	out, _ := anonymized(t, testKey)
	image := regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`)
	for i, o := range out {
		name, before := o.GetName(), src[i].GetName()
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%s %s: %v", o.GetKind(), name, errs)
		}
		if len(validation.IsDNS1123Label(before)) == 0 && len(validation.IsDNS1123Label(name)) > 0 {
			t.Errorf("%s %s: was a DNS-1123 label (%s), is not", o.GetKind(), name, before)
		}
		if o.GetKind() == "Service" || o.GetKind() == "Namespace" {
			if errs := validation.IsDNS1035Label(name); o.GetKind() == "Service" && len(errs) > 0 {
				t.Errorf("service %s: %v", name, errs)
			}
			if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
				t.Errorf("%s %s: %v", o.GetKind(), name, errs)
			}
		}
		checkLabels(t, o.Object)
	}
	for _, p := range ofKind[corev1.Pod](t, out, "Pod") {
		for _, c := range p.Spec.Containers {
			if !image.MatchString(c.Image) {
				t.Errorf("pod %s: image %q is not a reference", p.Name, c.Image)
			}
			if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
				t.Errorf("pod %s: container name %q: %v", p.Name, c.Name, errs)
			}
		}
	}
}

// checkLabels checks every label map and selector below v.
func checkLabels(t *testing.T, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "labels", "matchLabels", "selector", "nodeSelector":
				if m, ok := e.(map[string]any); ok {
					for key, val := range m {
						if s, ok := val.(string); ok {
							if errs := validation.IsValidLabelValue(s); len(errs) > 0 {
								t.Errorf("%s=%q: %v", key, s, errs)
							}
						}
					}
				}
			case "values":
				if l, ok := e.([]any); ok {
					for _, val := range l {
						if s, ok := val.(string); ok && len(validation.IsValidLabelValue(s)) > 0 {
							t.Errorf("selector value %q is not a label value", s)
						}
					}
				}
			}
			checkLabels(t, e)
		}
	case []any:
		for _, e := range v {
			checkLabels(t, e)
		}
	}
}

// Unknown kinds: metadata mapped, the rest as it was.
func TestUnknownKindMetadataOnly(t *testing.T) {
	out, _ := anonymized(t, testKey)
	for _, o := range out {
		if o.GetKind() != "Widget" {
			continue
		}
		size, _, _ := unstructured.NestedInt64(o.Object, "spec", "size")
		if size != 3 || strings.Contains(o.GetName(), "payments") || o.GetNamespace() == "payments" {
			t.Errorf("widget: %v", o.Object)
		}
		return
	}
	t.Fatal("no Widget in the output")
}

func TestDerivedSuffixes(t *testing.T) {
	for s, want := range map[string]bool{
		"x2v9k": true, "7d9f8b6c4": true, "0": true, "29391040": true, "0-bq4zt": true,
		"db": false, "canary": false, "v2": false, "": false, "x2v9k-canary": false,
	} {
		if generated(s) != want {
			t.Errorf("generated(%q) = %v, want %v", s, !want, want)
		}
	}
	for _, s := range []string{"", "7", "-3", "1.5", "1,3", "true", "False", "2026-11-20T10:00:00Z", "00000000-0000-4000-8000-000000000001", "1h", "30s", "1m30s", "1.5s"} {
		if !namesNothing(s) {
			t.Errorf("namesNothing(%q) = false", s)
		}
	}
	for _, s := range []string{"web", "10.0.1.11", "v1.2.3", "yes", "ip-10-0-1-11", "1a", "5sm", "h", "1hx"} {
		if namesNothing(s) {
			t.Errorf("namesNothing(%q) = true", s)
		}
	}
}

// The simulator's own settings survive: a run duration, a chaos mode.
func TestSimulatorSettingsKept(t *testing.T) {
	a := New(testKey)
	for _, kv := range [][2]string{{"kubesim.io/run-duration", "1h"}, {"chaos.kubesim.io/pod", "crash-loop"}, {"chaos.kubesim.io/delay", "5s"}} {
		if got := a.value(kv[0], kv[1]); got != kv[1] {
			t.Errorf("%s=%s became %s", kv[0], kv[1], got)
		}
	}
	if got := a.value("app", "crash-loop"); got == "crash-loop" {
		t.Error("app=crash-loop was kept: only the simulator's keys keep their words")
	}
}

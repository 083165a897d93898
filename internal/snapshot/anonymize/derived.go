package anonymize

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// part is one piece of a derived name: another name, mapped in its own
// right, or a piece kept as it is (a separator, a generated suffix).
type part struct {
	s    string
	keep bool
}

// Controllers name what they create after its owner: a ReplicaSet
// <deployment>-<pod-template-hash>, its pods <replicaset>-<random>, a
// StatefulSet's pods <statefulset>-<ordinal> and claims
// <template>-<statefulset>-<ordinal>, a CronJob's Jobs <cronjob>-<minute>,
// a mirror pod <name>-<node>. Mapping such a name whole would break the
// link (a StatefulSet would not adopt its renamed pods, a pod-template-hash
// would not match its ReplicaSet's name), so it is rebuilt from the
// mapping of the names it is made of, with the generated suffix kept.
//
// derive collects these decompositions from the objects; str applies them
// to every occurrence of the string, wherever it stands (an owner
// reference, a statefulset.kubernetes.io/pod-name label, a claimName).
// Two objects deriving one string differently (rare: a Deployment named
// like another's ReplicaSet) are resolved the same way whatever the order
// of the objects, and counted.
func (a *Anonymizer) derive(objs []*unstructured.Unstructured) (ambiguous int) {
	found := map[string][][]part{}
	add := func(name string, parts ...part) { found[name] = append(found[name], parts) }
	type claim struct{ ns, name string }
	var claims []claim
	templates := map[string][][2]string{} // namespace → (statefulset, claim template)

	for _, o := range objs {
		name, ns := o.GetName(), o.GetNamespace()
		for _, ref := range o.GetOwnerReferences() {
			rest, ok := strings.CutPrefix(name, ref.Name+"-")
			switch {
			case !ok || rest == "":
			case generated(rest):
				add(name, part{s: ref.Name}, part{s: "-" + rest, keep: true})
			case o.GetKind() == "PersistentVolumeClaim" && ref.Kind == "Pod":
				// A generic ephemeral volume's claim: <pod>-<volume>.
				add(name, part{s: ref.Name}, part{s: "-", keep: true}, part{s: rest})
			}
		}
		if gen := o.GetGenerateName(); gen != "" {
			base := strings.TrimSuffix(gen, "-")
			if rest, ok := strings.CutPrefix(name, gen); ok && base != "" && generated(rest) {
				add(name, part{s: base}, part{s: name[len(base):], keep: true})
			}
		}
		switch o.GetKind() {
		case "Pod":
			node, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName")
			if base, ok := strings.CutSuffix(name, "-"+node); ok && node != "" && base != "" && mirror(o) {
				add(name, part{s: base}, part{s: "-", keep: true}, part{s: node})
			}
			for _, v := range items(o.Object, "spec", "volumes") {
				if c, _, _ := unstructured.NestedString(v, "persistentVolumeClaim", "claimName"); c != "" {
					claims = append(claims, claim{ns, c})
				}
			}
			if ref := controllerOf(o, "StatefulSet"); ref != "" {
				rev := o.GetLabels()["controller-revision-hash"]
				if rest, ok := strings.CutPrefix(rev, ref+"-"); ok && generated(rest) {
					add(rev, part{s: ref}, part{s: "-" + rest, keep: true})
				}
			}
		case "PersistentVolumeClaim":
			claims = append(claims, claim{ns, name})
		case "StatefulSet":
			for _, t := range items(o.Object, "spec", "volumeClaimTemplates") {
				if tn, _, _ := unstructured.NestedString(t, "metadata", "name"); tn != "" {
					templates[ns] = append(templates[ns], [2]string{name, tn})
				}
			}
		}
	}
	for _, c := range claims {
		for _, st := range templates[c.ns] {
			sts, tmpl := st[0], st[1]
			if ord, ok := strings.CutPrefix(c.name, tmpl+"-"+sts+"-"); ok && digitsRE.MatchString(ord) {
				add(c.name, part{s: tmpl}, part{s: "-", keep: true}, part{s: sts}, part{s: "-" + ord, keep: true})
			}
		}
	}

	for name, all := range found {
		slices.SortFunc(all, func(x, y []part) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		all = slices.CompactFunc(all, slices.Equal)
		if len(all) > 1 {
			ambiguous++
		}
		a.derived[name] = all[0]
	}
	return ambiguous
}

var (
	digitsRE = regexp.MustCompile(`^[0-9]+$`)
	// hashRE is the alphabet of Kubernetes' generated names and hashes
	// (k8s.io/apimachinery/pkg/util/rand): no vowels, so no words.
	hashRE = regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz2456789]{4,10}$`)
)

// generated reports a suffix a controller or generateName made: dash-
// separated ordinals, minutes, hashes and random strings. Anything else
// may be a word of the source and is not kept.
func generated(s string) bool {
	for seg := range strings.SplitSeq(s, "-") {
		if !digitsRE.MatchString(seg) && !hashRE.MatchString(seg) {
			return false
		}
	}
	return true
}

// mirror reports a static pod's mirror: named <name>-<node> by the kubelet.
func mirror(o *unstructured.Unstructured) bool {
	if _, ok := o.GetAnnotations()["kubernetes.io/config.mirror"]; ok {
		return true
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Node" {
			return true
		}
	}
	return false
}

// controllerOf is the name of o's controller if it is of the given kind.
func controllerOf(o *unstructured.Unstructured, kind string) string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == kind && ref.Controller != nil && *ref.Controller {
			return ref.Name
		}
	}
	return ""
}

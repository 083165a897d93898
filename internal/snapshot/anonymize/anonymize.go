package anonymize

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Summary says what Objects did.
type Summary struct {
	// Rewritten counts the objects of each kind whose fields were mapped.
	Rewritten map[string]int
	// MetadataOnly counts objects of kinds this package does not know
	// (custom resources): their names, namespaces, labels, annotations
	// and owner references were mapped, the rest was left as it was and
	// may still hold the source's names.
	MetadataOnly map[string]int
	// Names is how many distinct strings were mapped (not kept).
	Names int
	// Ambiguous counts names two objects derive differently (see
	// derive): each is mapped one way, the same whatever the order.
	Ambiguous int
}

// String is the summary in one line, for the export's output.
func (s Summary) String() string {
	line := "anonymized " + counts(s.Rewritten)
	if len(s.MetadataOnly) > 0 {
		line += "; names, labels and annotations only: " + counts(s.MetadataOnly)
	}
	if s.Ambiguous > 0 {
		line += fmt.Sprintf("; %d names derived two ways, mapped one way", s.Ambiguous)
	}
	return line
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	if parts == nil {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Objects maps every name, namespace, label and annotation value and
// image of objs in place, each reference the same way as what it names.
// It must be given the whole snapshot at once: names derived from other
// objects' names are recognised among objs only. The result depends on
// the key and the objects alone, not on their order.
//
// It fails, leaving objs part-rewritten, if a mapped name would not be a
// valid name of the shape of the source's (DNS-1123 label, DNS-1035
// label, subdomain) or a label value would be invalid, or if two strings
// map to one; none of these happens with real clusters' names, but a
// file that broke them would fail to apply much later and less clearly.
func (a *Anonymizer) Objects(objs []*unstructured.Unstructured) (Summary, error) {
	a.reset()
	sum := Summary{Rewritten: map[string]int{}, MetadataOnly: map[string]int{}}
	sum.Ambiguous = a.derive(objs)
	for _, o := range objs {
		before := o.GetName()
		kind := o.GetKind()
		if !a.rewrite(o) {
			kind = o.GroupVersionKind().GroupKind().String()
			sum.MetadataOnly[kind]++
		} else {
			sum.Rewritten[kind]++
		}
		if err := check(kind, before, o); err != nil {
			return sum, err
		}
	}
	if len(a.clash) > 0 {
		return sum, fmt.Errorf("anonymize: two different strings map to %q under this key; export again with a new key", a.clash[0])
	}
	for s, mapped := range a.memo {
		if s != mapped {
			sum.Names++
		}
	}
	return sum, nil
}

// check verifies that o's mapped name keeps the shape of its source name
// and that its labels are valid.
func check(kind, before string, o *unstructured.Unstructured) error {
	after := o.GetName()
	bad := func(why string) error {
		return fmt.Errorf("anonymize: %s %q would become %q, which is %s; export it without --anonymize, or without this object", kind, before, after, why)
	}
	switch {
	case before == "":
	case len(validation.IsDNS1123Subdomain(before)) == 0 && len(validation.IsDNS1123Subdomain(after)) > 0:
		return bad("not a DNS-1123 subdomain")
	case len(validation.IsDNS1123Label(before)) == 0 && len(validation.IsDNS1123Label(after)) > 0:
		return bad("not a DNS-1123 label")
	case len(validation.IsDNS1035Label(before)) == 0 && len(validation.IsDNS1035Label(after)) > 0:
		return bad("not a DNS-1035 label")
	}
	for k, v := range o.GetLabels() {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("anonymize: %s %q: its label %s would become %q, which is not a valid label value (%s); export it without --anonymize, or without this object", kind, before, k, v, errs[0])
		}
	}
	return nil
}

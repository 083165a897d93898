package scenario

import (
	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// checkKind is one check an assertion can make, declared once, in a file
// of its own (check_*.go): the Assertion field that sets it, how it is
// validated, named and evaluated.
type checkKind struct {
	name string // the field's JSON name
	// validate checks what decoding cannot; nil when there is nothing.
	validate func(*v1alpha1.Assertion) error
	// describe is the assertion's name when the file gives none.
	describe func(*v1alpha1.Assertion) string
	evaluate func(*view, *v1alpha1.Assertion) (passed bool, expected, actual string)
	// assertOnly, if set, is why a wait cannot make this check.
	assertOnly string
	// watch starts watching what a wait on this check must wake on,
	// beyond pods, nodes, PDBs and Deployments.
	watch func(*target)
	// groupBy, if set, is the topology key pictures of the cluster
	// group nodes by when a step makes this check.
	groupBy func(*v1alpha1.Assertion) string
}

func (k *checkKind) fieldName() string { return k.name }

// checkKinds are the checks an assertion can make.
var checkKinds = union[v1alpha1.Assertion, *checkKind]{noun: "check", whole: "assertion", split: "make it a list item each"}

func validateAssertion(a *v1alpha1.Assertion) error {
	k, err := checkKinds.one(a)
	if err != nil || k.validate == nil {
		return err
	}
	return k.validate(a)
}

// describe is an assertion's name: its own, or a description of its check.
func describe(a *v1alpha1.Assertion) string {
	if a.Name != "" {
		return a.Name
	}
	for _, k := range checkKinds.setOn(a) {
		return k.describe(a)
	}
	return "assertion"
}

func (v *view) evaluate(a *v1alpha1.Assertion) (bool, string, string) {
	for _, k := range checkKinds.setOn(a) {
		return k.evaluate(v, a)
	}
	return false, "", "no check"
}

// groupingKey is the topology key a picture after these assertions groups
// nodes by: the first one's that has one.
func groupingKey(as []v1alpha1.Assertion) string {
	for i := range as {
		for _, k := range checkKinds.setOn(&as[i]) {
			if k.groupBy != nil {
				return k.groupBy(&as[i])
			}
		}
	}
	return ""
}

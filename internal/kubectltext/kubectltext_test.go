package kubectltext

import (
	"testing"

	"k8s.io/kubectl/pkg/util/i18n"
)

func TestIsComponent(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"kubesim", "component", "kube-apiserver"}, true},
		{[]string{"kubesim", "component"}, false}, // main runs the CLI, which says what is missing
		{[]string{"kubesim", "kubectl", "get", "pods"}, false},
		{[]string{"kubesim", "create", "cluster"}, false},
		{[]string{"kubesim"}, false},
	} {
		if got := IsComponent(tc.args); got != tc.want {
			t.Errorf("IsComponent(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// A component's text, with no catalogue loaded, is kubectl's English source:
// what kubectl says in an English locale.
func TestNoCatalogueKeepsSourceText(t *testing.T) {
	if err := i18n.SetLoadTranslationsFunc(noCatalogue); err != nil {
		t.Fatal(err)
	}
	const s = "Print the list of flags inherited by all commands"
	if got := i18n.T(s); got != s {
		t.Errorf("T(%q) = %q with no catalogue", s, got)
	}
}

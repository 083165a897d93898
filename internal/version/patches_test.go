package version

import "testing"

func TestPatchesLine(t *testing.T) {
	for _, c := range []struct{ stamped, want string }{
		{"", "patches: none (built without make: upstream modules as released)"},
		{"k8s.io/kubernetes/0001-a.patch", "patches: k8s.io/kubernetes/0001-a.patch"},
		{"k8s.io/apiserver/0002-b.patch,k8s.io/kubernetes/0001-a.patch", "patches: k8s.io/apiserver/0002-b.patch, k8s.io/kubernetes/0001-a.patch"},
	} {
		if got := patchesLine(c.stamped); got != c.want {
			t.Errorf("patchesLine(%q) = %q, want %q", c.stamped, got, c.want)
		}
	}
}

// HasPatch matches a whole MODULE/FILE of the stamped list, never a part.
func TestHasPatch(t *testing.T) {
	old := Patches
	defer func() { Patches = old }()
	for _, c := range []struct {
		stamped, name string
		want          bool
	}{
		{"", "k8s.io/kubernetes/0001-a.patch", false},
		{"k8s.io/kubernetes/0001-a.patch", "k8s.io/kubernetes/0001-a.patch", true},
		{"k8s.io/apiserver/0002-b.patch,k8s.io/kubernetes/0001-a.patch", "k8s.io/kubernetes/0001-a.patch", true},
		{"k8s.io/apiserver/0002-b.patch,k8s.io/kubernetes/0001-a.patch", "k8s.io/kubernetes/0001", false},
		{"k8s.io/apiserver/0002-b.patch", "", false},
	} {
		Patches = c.stamped
		if got := HasPatch(c.name); got != c.want {
			t.Errorf("with %q, HasPatch(%q) = %v, want %v", c.stamped, c.name, got, c.want)
		}
	}
}

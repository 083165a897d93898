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

package kubeversion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// Each version under versions/ is in the table, at the release its
// go.mod pins, and the table names no other.
func TestTableIsTheVersionModules(t *testing.T) {
	mods, err := filepath.Glob("../../versions/v*/go.mod")
	if err != nil || len(mods) == 0 {
		t.Fatalf("no version modules (%v)", err)
	}
	pinned := map[string]string{}
	for _, path := range mods {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.ParseLax(path, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		minor := strings.TrimPrefix(filepath.Base(filepath.Dir(path)), "v")
		for _, r := range f.Require {
			if r.Mod.Path == "k8s.io/kubernetes" {
				pinned[minor] = r.Mod.Version
			}
		}
		if pinned[minor] == "" {
			t.Errorf("%s requires no k8s.io/kubernetes", path)
		}
	}
	for _, v := range others {
		if pinned[v.Minor] != v.Release {
			t.Errorf("the table has %s as %s; versions/v%s/go.mod pins %q", v.Minor, v.Release, v.Minor, pinned[v.Minor])
		}
		delete(pinned, v.Minor)
	}
	for minor, release := range pinned {
		t.Errorf("versions/v%s (%s) is not in the table", minor, release)
	}
}

func TestLookup(t *testing.T) {
	ownRelease = func() string { return "v1.36.3" } // a test binary has no stamp
	own := Default()
	for name, want := range map[string]string{"": own.Minor, own.Minor: own.Minor, "v" + own.Minor: own.Minor, own.Release: own.Minor} {
		v, err := Lookup(name)
		if err != nil || v.Minor != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", name, v, err, want)
		}
	}
	for name, want := range map[string]string{
		"1.99":   "kubesim does not offer Kubernetes 1.99",
		"1.33":   "kubesim does not offer Kubernetes 1.33",
		"latest": `"latest" is not a Kubernetes version`,
		"01.040": "kubesim does not offer Kubernetes 1.40:",
		"1.35.1": "kubesim offers Kubernetes 1.35 as v1.35.4 only",
		"1.35":   "1.35 is not built here (no kubesim-k8s-1.35 beside kubesim): build it with `make build VERSIONS=1.35`",
	} {
		_, err := Lookup(name)
		if err == nil || !strings.HasPrefix(err.Error(), FieldPrefix) || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%q): %v; want %q", name, err, want)
		}
	}
	if got := compareMinors("1.9", "1.10"); got >= 0 {
		t.Errorf("1.9 is not before 1.10 (%d)", got)
	}
}

func TestCheckUpgrade(t *testing.T) {
	v := func(minor string) Version { return Version{Minor: minor, Release: "v" + minor + ".0"} }
	if err := CheckUpgrade(v("1.35"), v("1.36")); err != nil {
		t.Errorf("1.35 → 1.36: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"1.36", "1.35", "1.35 is older than the cluster's 1.36: Kubernetes does not downgrade"},
		{"1.34", "1.36", "1.36 skips 1.35: a control plane is upgraded one minor at a time (version skew policy); upgrade to 1.35 first"},
		{"1.36", "1.36", "the cluster runs Kubernetes v1.36.0 already"},
		{"1.9", "1.11", "1.11 skips 1.10"},
	} {
		err := CheckUpgrade(v(c.from), v(c.to))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v; want %q", c.from, c.to, err, c.want)
		}
	}
}

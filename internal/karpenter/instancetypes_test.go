package karpenter

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

const goodType = `{"name": "m-2x", "architecture": "amd64", "operatingSystems": ["linux"],
  "resources": {"cpu": "2", "memory": "8Gi"},
  "offerings": [{"Price": 0.1, "Requirements": [
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]}`

// The built-in catalog passes the check it is the model of.
func TestBuiltinCatalogPasses(t *testing.T) {
	if err := checkInstanceTypes(kwokCatalog(t)); err != nil {
		t.Fatal(err)
	}
}

func TestReadInstanceTypesRefusesWhatCannotLaunch(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`[` + goodType + `]`, ""},
		{`{`, "not a JSON list of instance types"},
		{`[]`, "no instance types"},
		{`[{"name": "x", "colour": "red"}]`, `unknown field "colour"`},
		{`[` + strings.Replace(goodType, `"name": "m-2x", `, ``, 1) + `]`, "[0].name: missing"},
		{`[` + goodType + `,` + goodType + `]`, "[1] (m-2x).name: given twice"},
		{`[` + strings.Replace(goodType, `"cpu": "2", `, ``, 1) + `]`, "[0] (m-2x).resources.cpu: missing"},
		{`[` + strings.Replace(goodType, `"amd64"`, `""`, 1) + `]`, "[0] (m-2x).architecture: missing"},
		{`[` + strings.Replace(goodType, `0.1`, `-1`, 1) + `]`, "[0] (m-2x).offerings[0].Price: -1"},
		{`[` + strings.Replace(goodType, `"zone-a"`, ``, 1) + `]`, `offerings[0].Requirements: no "topology.kubernetes.io/zone"`},
		{`[{"name": "bare", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "1", "memory": "1Gi"}}]`, "[0] (bare).offerings: none"},
	} {
		path := filepath.Join(t.TempDir(), "types.json")
		if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadInstanceTypes(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want %q", tc.file, err, tc.want)
		case err != nil && (!strings.HasPrefix(err.Error(), instanceTypesField+": "+path) || strings.Contains(err.Error(), "\n")):
			t.Errorf("error %q: want one line naming the field and the file", err)
		}
	}
	if _, err := ReadInstanceTypes(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.HasPrefix(err.Error(), instanceTypesField) {
		t.Errorf("a missing file: %v", err)
	}
}

// kwokCatalog is the provider's embedded catalog, read from the module
// cache the build used (the package does not export it).
func kwokCatalog(t *testing.T) []byte {
	t.Helper()
	info, _ := debug.ReadBuildInfo()
	var version string
	for _, m := range info.Deps {
		if m.Path == "sigs.k8s.io/karpenter" {
			version = m.Version
		}
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(cmp.Or(os.Getenv("GOPATH"), filepath.Join(home, "go")), "pkg", "mod")
	}
	data, err := os.ReadFile(filepath.Join(cache, "sigs.k8s.io", "karpenter@"+version, "kwok", "cloudprovider", "instance_types.json"))
	if err != nil {
		t.Skipf("the KWOK provider's catalog is not in the module cache: %v", err)
	}
	return data
}

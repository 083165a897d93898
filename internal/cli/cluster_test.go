package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadConfigFlagNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodez: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	for path, want := range map[string]string{
		missing: "--config: open " + missing + ": no such file or directory",
		bad:     "--config " + bad + `:3: unknown field "nodez"`,
	} {
		if _, err := loadConfigFlag(path); err == nil || err.Error() != want {
			t.Errorf("loadConfigFlag(%s) = %v, want %q", path, err, want)
		}
	}
	if c, err := loadConfigFlag(""); err != nil || c.Name != "" {
		t.Errorf("no --config: %+v, %v; want an empty config", c, err)
	}
}

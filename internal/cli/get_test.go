package cli

import (
	"strings"
	"testing"
)

func TestGetClustersOutput(t *testing.T) {
	for format, want := range map[string]string{"json": "[]\n", "yaml": "[]\n", "table": ""} {
		out, errOut, err := execute(t, "get", "clusters", "-o", format)
		if err != nil || out != want {
			t.Errorf("get clusters -o %s with no clusters: %q, %v; want %q", format, out, err, want)
		}
		if hint := strings.Contains(errOut, "No clusters"); hint != (format == "table") {
			t.Errorf("get clusters -o %s: stderr %q; the hint is for tables only", format, errOut)
		}
	}
	_, _, err := execute(t, "get", "clusters", "-o", "xml")
	if want := `invalid argument "xml" for "-o, --output" flag: use one of table, json, yaml`; err == nil || err.Error() != want {
		t.Errorf("get clusters -o xml: %v, want %q", err, want)
	}
}

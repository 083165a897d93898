package controlplane

import (
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Simulated kubelets, nodes and pods are refused, and so is every address
// off this machine; loopback is connected through.
func TestEgressRefusesAllButLoopback(t *testing.T) {
	for _, tc := range []struct{ host, port, want string }{
		{"10.64.0.1", "10250", "node 10.64.0.1 is simulated"},
		{"node-000000", "10250", "node node-000000 is simulated"},
		{"10.0.3.7", "8080", "is simulated"},     // a pod
		{"node-000000", "8080", "is simulated"},  // no DNS lookups
		{"93.184.216.34", "443", "is simulated"}, // off the machine
		{"127.0.0.1", "9443", ""},
		{"::1", "9443", ""},
	} {
		if got := refusal(tc.host, tc.port); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("refusal(%s, %s) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
}

func TestCheckSocketPath(t *testing.T) {
	if err := CheckSocketPath(clusterdir.For("/home/me/.kubesim", "blue")); err != nil {
		t.Errorf("a usual home: %v", err)
	}
	deep := clusterdir.For("/"+strings.Repeat("d", 90), "blue")
	if err := CheckSocketPath(deep); err == nil || !strings.Contains(err.Error(), "KUBESIM_HOME") {
		t.Errorf("a home too deep for a unix socket: %v", err)
	}
}

package controlplane

import (
	"strings"
	"testing"
)

func TestFailedChecksNamesThem(t *testing.T) {
	body := "[+]ping ok\n[-]etcd failed: reason withheld\n[+]log ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nreadyz check failed\n"
	if got, want := failedChecks(strings.NewReader(body)), " (failed: etcd, poststarthook/rbac/bootstrap-roles)"; got != want {
		t.Errorf("failedChecks = %q, want %q", got, want)
	}
	if got := failedChecks(strings.NewReader("404 page not found\n")); got != "" {
		t.Errorf("a body listing no checks gave %q", got)
	}
}

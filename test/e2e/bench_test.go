package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// TestBenchScenarios runs each `kubesim bench` scenario small: each must
// finish, report every phase with its count, and leave no cluster behind.
// Speed itself is the benchmarks' business, not this test's.
func TestBenchScenarios(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args   []string
		phases []string
		// sim says whether the kubelet simulator runs in the cluster.
		sim bool
	}{
		{[]string{"nodes", "--nodes", "5"}, []string{"nodes created and Ready: 5 in"}, true},
		{[]string{"pods", "--pods", "20"}, []string{"pods (nodeName set) created and Running: 20 in", "pods deleted and gone: 20 in"}, true},
		{[]string{"deployment", "--nodes", "3", "--pods", "12"}, []string{"nodes created and Ready: 3 in", "deployment pods scheduled and Running: 12 in"}, true},
		{[]string{"scale", "--nodes", "3", "--pods", "12", "--hold", "3s"}, []string{"nodes created and Ready: 3 in", "pods (nodeName set, spread over the nodes) created and Running: 12 in",
			"nodes Ready and pods Running, held for 3s: 12 in", "pods deleted and gone: 12 in"}, true},
		{[]string{"floor", "--nodes", "5", "--pods", "20"}, []string{"floor: pods created (nothing else): 20 in", "floor: pods deleted at once and gone: 20 in", "floor: nodes created (nothing else): 5 in"}, false},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			e := e.in(t)
			r := e.must(append([]string{"bench"}, tc.args...)...)
			for _, p := range tc.phases {
				if !strings.Contains(r.stdout, p) {
					t.Errorf("bench %v: no phase %q in:\n%s", tc.args, p, r.stdout)
				}
			}
			if !regexp.MustCompile(`(?m)^\s+total\s+[0-9.]+\s+[0-9]+Mi\s+[0-9]+Mi$`).MatchString(r.stdout) {
				t.Errorf("bench %v: no total row with RSS and peak RSS in:\n%s", tc.args, r.stdout)
			}
			// Each phase has its per-component table; the API server is always in it.
			if got := strings.Count(r.stdout, "kube-apiserver"); got != len(tc.phases) {
				t.Errorf("bench %v: %d kube-apiserver rows for %d phases:\n%s", tc.args, got, len(tc.phases), r.stdout)
			}
			if sim := regexp.MustCompile(`(?m)^\s+kubelet-sim\s`).MatchString(r.stdout); sim != tc.sim {
				t.Errorf("bench %v: kubelet-sim row present = %v, want %v:\n%s", tc.args, sim, tc.sim, r.stdout)
			}
			if out := e.must("get", "clusters").stdout; strings.Contains(out, "bench-") {
				t.Errorf("bench %v left a cluster behind:\n%s", tc.args, out)
			}
		})
	}
}

// TestBenchDPDB runs `kubesim bench dpdb` small: with the eviction webhook
// no pair of simultaneous neighbour evictions both pass; it reports the
// lock's latency and the propagation lag, and leaves no cluster behind.
func TestBenchDPDB(t *testing.T) {
	e := newEnv(t)
	r := e.must("bench", "dpdb", "--pairs", "3")
	for _, want := range []string{"of 3 without the webhook, 0 of 3 with it", "admitted eviction latency: p50", "propagation lag without the webhook", "over 3"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bench dpdb: no %q in:\n%s", want, r.stdout)
		}
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "dpdb-bench-") {
		t.Errorf("bench dpdb left clusters behind:\n%s", out)
	}
}

// TestBenchCreate: `bench create` times each step and splits create into
// its phases by the supervisor's log.
func TestBenchCreate(t *testing.T) {
	e := newEnv(t)
	r := e.must("bench", "create", "--runs", "1")
	phases := regexp.MustCompile(`create by phase \(median\):  prepare [0-9.]+s  etcd [0-9.]+s  kube-apiserver [0-9.]+s  bootstrap [0-9.]+s  components [0-9.]+s  return [0-9.]+s  default ServiceAccount after create [0-9.]+s`)
	if !strings.Contains(r.stdout, "median") || !phases.MatchString(r.stdout) {
		t.Errorf("bench create: no median row or phases:\n%s", r.stdout)
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "bench-") {
		t.Errorf("bench create left a cluster behind:\n%s", out)
	}
}

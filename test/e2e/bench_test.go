//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// TestBenchScenarios runs each `kubesim bench` scenario small: each must
// finish, report every phase with its count (the floor's phases first,
// measured in a cluster of its own, and each phase's ratio to its floor),
// and leave no cluster behind. Speed itself is the benchmarks' business,
// not this test's.
func TestBenchScenarios(t *testing.T) {
	e := newEnvAlone(t)
	const (
		floorCreated = "floor: pods created (nothing else)"
		floorDeleted = "floor: pods deleted at once and gone"
		floorNodes   = "floor: nodes created (nothing else)"
	)
	for _, tc := range []struct {
		args   []string
		phases []string
		// floors are the floor's phases each phase is set against ("": none).
		floors []string
		// sim says whether the kubelet simulator runs in the scenario's cluster.
		sim bool
	}{
		{[]string{"nodes", "--nodes", "5"}, []string{"nodes created and Ready: 5 in"}, []string{floorNodes + ": 5 in"}, true},
		{[]string{"nodes", "--nodes", "5", "--floor=false"}, []string{"nodes created and Ready: 5 in"}, []string{""}, true},
		{[]string{"pods", "--pods", "20"}, []string{"pods (nodeName set) created and Running: 20 in", "pods deleted and gone: 20 in"},
			[]string{floorCreated + ": 20 in", floorDeleted + ": 20 in"}, true},
		{[]string{"deployment", "--nodes", "3", "--pods", "12"}, []string{"nodes created and Ready: 3 in", "deployment pods scheduled and Running: 12 in"},
			[]string{floorNodes + ": 3 in", floorCreated + ": 12 in"}, true},
		{[]string{"scale", "--nodes", "3", "--pods", "12", "--hold", "3s"}, []string{"nodes created and Ready: 3 in", "pods (nodeName set, spread over the nodes) created and Running: 12 in",
			"nodes Ready and pods Running, held for 3s: 12 in", "pods deleted and gone: 12 in"},
			[]string{floorNodes + ": 3 in", floorCreated + ": 12 in", "", floorDeleted + ": 12 in"}, true},
		{[]string{"floor", "--nodes", "5", "--pods", "20"}, []string{floorCreated + ": 20 in", floorDeleted + ": 20 in", floorNodes + ": 5 in"}, []string{"", "", ""}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			e := e.in(t)
			r := e.must(append([]string{"bench"}, tc.args...)...)
			lines := strings.Split(r.stdout, "\n")
			lineOf := func(prefix string) int {
				for i, l := range lines {
					if strings.HasPrefix(l, prefix) {
						return i
					}
				}
				return -1
			}
			ratio := regexp.MustCompile(`^  [0-9]+\.[0-9]{2}× the floor \((.*)\.[0-9]{2}s\)$`)
			for i, p := range tc.phases {
				at := lineOf(p)
				if at < 0 || at+1 >= len(lines) {
					t.Errorf("bench %v: no phase %q in:\n%s", tc.args, p, r.stdout)
					continue
				}
				// A phase's ratio line comes right after its own line; the
				// floor's phase is printed before it.
				m := ratio.FindStringSubmatch(lines[at+1])
				switch f := tc.floors[i]; {
				case f == "" && m != nil:
					t.Errorf("bench %v: phase %q has a ratio to a floor: %q", tc.args, p, lines[at+1])
				case f != "" && (m == nil || !strings.HasPrefix(m[1], f)):
					t.Errorf("bench %v: phase %q: line after it %q, want its ratio to %q", tc.args, p, lines[at+1], f)
				case f != "":
					if fa := lineOf(f); fa < 0 || fa > at {
						t.Errorf("bench %v: the floor's phase %q is not printed before %q:\n%s", tc.args, f, p, r.stdout)
					}
				}
			}
			if !regexp.MustCompile(`(?m)^\s+total\s+[0-9.]+\s+[0-9]+Mi\s+[0-9]+Mi$`).MatchString(r.stdout) {
				t.Errorf("bench %v: no total row with RSS and peak RSS in:\n%s", tc.args, r.stdout)
			}
			// Each phase, the floor's too, has its per-component table; the
			// API server is always in it.
			want := len(tc.phases)
			if tc.args[0] != "floor" {
				want += strings.Count(r.stdout, "\nfloor: ")
				if strings.HasPrefix(r.stdout, "floor: ") {
					want++
				}
			}
			if got := strings.Count(r.stdout, "kube-apiserver"); got != want {
				t.Errorf("bench %v: %d kube-apiserver rows for %d phases:\n%s", tc.args, got, want, r.stdout)
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

// TestBenchClone runs `kubesim bench clone` small: the floor first, then
// the export with the source's components' CPU, then the clone set against
// the floor, with create's steps; no cluster left behind. A source larger
// than its nodes hold is refused.
func TestBenchClone(t *testing.T) {
	e := newEnvAlone(t)
	r := e.must("bench", "clone", "--nodes", "3", "--pods", "12")
	out := r.stdout
	floor := "floor: nodes and pods bound across them created (nothing else): 15 in"
	export := "source exported (snapshot export; CPU: the source's components): 15 in"
	clone := "cloned (create cluster --from): nodes Ready, pods Running: 15 in"
	at := func(s string) int { return strings.Index(out, "\n"+s) }
	if f, x, c := at(floor), at(export), at(clone); f < 0 || x < f || c < x {
		t.Fatalf("want the floor, the export and the clone, in that order:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(export) + `.*\n(  .*\n)*?  kube-apiserver\s+[0-9.]+`).MatchString(out) {
		t.Errorf("no source API server CPU under the export:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(clone) + `.*\n  [0-9]+\.[0-9]{2}× the floor \(` + regexp.QuoteMeta(floor)).MatchString(out) {
		t.Errorf("the clone's phase is not set against the floor:\n%s", out)
	}
	for _, want := range []string{"  the file: ", "Cloned in", "3 nodes Ready, 12 pods Running"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "bench-") {
		t.Errorf("bench clone left a cluster behind:\n%s", out)
	}
	e.fails("--pods: 400 is more than 3 nodes hold (110 each); give at most 330, or more --nodes", "bench", "clone", "--nodes", "3", "--pods", "400")
}

// TestBenchDPDB runs `kubesim bench dpdb` small: with the eviction webhook
// no pair of simultaneous neighbour evictions both pass; it reports the
// lock's latency and the propagation lag, and leaves no cluster behind.
func TestBenchDPDB(t *testing.T) {
	e := newEnvAlone(t)
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
	e := newEnvAlone(t)
	r := e.must("bench", "create", "--runs", "1")
	phases := regexp.MustCompile(`create by phase \(median\):  prepare [0-9.]+s  etcd [0-9.]+s  kube-apiserver [0-9.]+s  bootstrap [0-9.]+s  components [0-9.]+s  return [0-9.]+s  default ServiceAccount after create [0-9.]+s`)
	if !strings.Contains(r.stdout, "median") || !phases.MatchString(r.stdout) {
		t.Errorf("bench create: no median row or phases:\n%s", r.stdout)
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "bench-") {
		t.Errorf("bench create left a cluster behind:\n%s", out)
	}
}

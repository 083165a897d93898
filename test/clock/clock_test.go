//go:build goclock

// Package clock tests the scaled Go clock of patches/go: it builds
// test/clock/probe with the overlay and measures, in real time, how long the
// probe's virtual waits take. Behind the goclock tag because the overlay
// rebuilds the standard library (a minute on 2 cores):
//
//	go test -tags goclock -count=1 ./test/clock/
package clock

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	gocmd string // the overlay's go command
	bin   string // where the probes are built
	probe string // the probe built with the overlay
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goclock")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		out, err := exec.Command("../../patches/go/overlay.sh", filepath.Join(dir, "overlay")).Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "overlay.sh:", err, stderrOf(err))
			return 1
		}
		gocmd, bin = strings.TrimSpace(string(out)), dir
		if probe, err = build("probe"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build builds ./name with the overlay.
func build(name string) (string, error) {
	path := filepath.Join(bin, name)
	if out, err := exec.Command(gocmd, "build", "-o", path, "./"+name).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", name, err, out)
	}
	return path, nil
}

type result struct {
	RealNanos   int64  `json:"realNanos"`
	SinceNanos  int64  `json:"sinceNanos"`
	Err         string `json:"err"`
	VirtualUnix int64  `json:"virtualUnix"`
	RealUnix    int64  `json:"realUnix"`
}

func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(probe, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe %v %v: %v %s", env, args, err, stderrOf(err))
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("probe %v: %v: %q", args, err, out)
	}
	return r
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// within fails unless got is want ± 5 %.
func within(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if d := got - want; d < -want/20 || d > want/20 {
		t.Errorf("%s: took %v real, want %v ± 5%%", what, got, want)
	} else {
		t.Logf("%s: %v real (want %v)", what, got, want)
	}
}

func TestWaitsRunOnVirtualTime(t *testing.T) {
	for _, tc := range []struct {
		scale   int
		args    []string
		real    time.Duration
		wantErr string
	}{
		{1, []string{"sleep", "2s"}, 2 * time.Second, ""},
		{10, []string{"sleep", "30s"}, 3 * time.Second, ""},
		{60, []string{"sleep", "30s"}, 500 * time.Millisecond, ""},
		{10, []string{"ticker", "1s", "10"}, time.Second, ""}, // 10 ticks a real second
		{60, []string{"ticker", "1s", "60"}, time.Second, ""},
		{10, []string{"ctx", "10s"}, time.Second, "context deadline exceeded"},
		{60, []string{"ctx", "10s"}, time.Second / 6, "context deadline exceeded"},
		{10, []string{"tcp", "10s"}, time.Second, "timeout"},
		{60, []string{"tcp", "10s"}, time.Second / 6, "timeout"},
	} {
		name := fmt.Sprintf("scale %d %s", tc.scale, strings.Join(tc.args, " "))
		t.Run(name, func(t *testing.T) {
			r := run(t, []string{fmt.Sprintf("KUBESIM_TIME_SCALE=%d", tc.scale)}, tc.args...)
			within(t, name, time.Duration(r.RealNanos), tc.real)
			// time.Since saw the virtual duration.
			within(t, name+" (time.Since)", time.Duration(r.SinceNanos), tc.real*time.Duration(tc.scale))
			if r.Err != tc.wantErr {
				t.Errorf("%s ended with %q, want %q", name, r.Err, tc.wantErr)
			}
		})
	}
}

// Two processes started at different moments with the same epoch and anchor
// read the same time, epoch + (real − anchor) × scale.
func TestProcessesAgreeOnTime(t *testing.T) {
	const scale = 10
	epoch := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	anchor := time.Now().UnixNano()
	env := []string{
		fmt.Sprintf("KUBESIM_TIME_SCALE=%d", scale),
		fmt.Sprintf("KUBESIM_TIME_EPOCH=%d", epoch),
		fmt.Sprintf("KUBESIM_TIME_ANCHOR=%d", anchor),
	}
	var offsets []time.Duration
	for i := range 2 {
		if i == 1 {
			// A later start: wait on a condition (real time moved on), not a sleep.
			for deadline := time.Now().Add(time.Second); time.Since(time.Unix(0, anchor)) < 300*time.Millisecond; {
				if time.Now().After(deadline) {
					t.Fatal("real time did not advance")
				}
			}
		}
		r := run(t, env, "now")
		want := epoch + (r.RealUnix-anchor)*scale
		offsets = append(offsets, time.Duration(r.VirtualUnix-want))
		t.Logf("process %d: %v, %v from epoch + (real − anchor) × %d", i, time.Unix(0, r.VirtualUnix).UTC(), offsets[i], scale)
	}
	for i, o := range offsets {
		if o < 0 || o > 3*time.Millisecond {
			t.Errorf("process %d's time.Now is %v off epoch + (real − anchor) × scale, want within 3ms", i, o)
		}
	}
	if d := offsets[1] - offsets[0]; d < -3*time.Millisecond || d > 3*time.Millisecond {
		t.Errorf("the two processes disagree by %v, want within 3ms", d)
	}
}

func TestBadEnvironmentFailsInOneLine(t *testing.T) {
	for _, env := range []string{"KUBESIM_TIME_SCALE=fast", "KUBESIM_TIME_SCALE=0", "KUBESIM_TIME_EPOCH=2030-01-01"} {
		cmd := exec.Command(probe, "now")
		cmd.Env = append(os.Environ(), "KUBESIM_TIME_SCALE=10", env)
		out, err := cmd.CombinedOutput()
		key := strings.SplitN(env, "=", 2)[0]
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: %v, want exit status 2", env, err)
		}
		if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], key) {
			t.Errorf("%s: output %q, want one line naming %s", env, out, key)
		}
	}
}

func TestOverlayRefusesOtherToolchain(t *testing.T) {
	cmd := exec.Command("../../patches/go/overlay.sh", t.TempDir())
	// A go command that says it is another version.
	fake := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ncase \"$2\" in GOVERSION) echo go1.27.4;; GOOS) echo linux;; GOARCH) echo amd64;; *) echo /nonexistent;; esac\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "GO="+fake)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("overlay.sh accepted go1.27.4: %s", out)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "go1.27.4") {
		t.Errorf("overlay.sh said %q, want one line naming go1.27.4", out)
	}
}

// runJSON builds ./name with the overlay, runs it at scale 10 and decodes its
// line of JSON into v.
func runJSON(t *testing.T, name string, v any, args ...string) {
	t.Helper()
	path, err := build(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "KUBESIM_TIME_SCALE=10")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v %s", name, err, stderrOf(err))
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s: %v: %q", name, err, out)
	}
	t.Logf("%s", out)
}

func between(t *testing.T, what, got string, lo, hi time.Duration) {
	t.Helper()
	d, err := time.ParseDuration(got)
	if err != nil || d < lo || d > hi {
		t.Errorf("%s: %s, want between %v and %v", what, got, lo, hi)
	}
}

// An embedded etcd at scale 10 keeps its leader and expires a lease on the
// virtual clock, a tenth of the TTL in real time.
func TestEtcdAtScale10(t *testing.T) {
	var r struct {
		Term           uint64
		LeaseGoneAfter string
		LeaseGoneReal  string
		Warnings       map[string]int
	}
	runJSON(t, "etcdprobe", &r, "-run", "20s", "-tick-ms", "10", "-election-ms", "100")
	if r.Term != 2 {
		t.Errorf("etcd's raft term is %d after 20s virtual, want 2 (it elected itself once and kept leading)", r.Term)
	}
	// Its lessor checks expiries every 500ms.
	between(t, "5s lease gone after (virtual)", r.LeaseGoneAfter, 5*time.Second, 6*time.Second)
	between(t, "5s lease gone after (real)", r.LeaseGoneReal, 500*time.Millisecond, 600*time.Millisecond)
}

// client-go's leader election and rate limiter follow the scaled clock.
func TestLeaderElectionAtScale10(t *testing.T) {
	type span struct{ Virtual, Real string }
	var r struct {
		RenewalsIn20s   int
		BTakesOverAfter span
		Limited         span `json:"60RequestsAt5QPSBurst10"`
	}
	runJSON(t, "leaseprobe", &r)
	// A renewal every RetryPeriod (2s, jittered).
	if r.RenewalsIn20s < 8 || r.RenewalsIn20s > 10 {
		t.Errorf("the leader renewed %d times in 20s virtual, want 8 to 10 (every 2s)", r.RenewalsIn20s)
	}
	// LeaseDuration (15s) after the candidate last saw a renewal, seen on its 2s retries.
	between(t, "take-over (virtual)", r.BTakesOverAfter.Virtual, 13*time.Second, 18*time.Second)
	between(t, "take-over (real)", r.BTakesOverAfter.Real, 1300*time.Millisecond, 1800*time.Millisecond)
	// (60 − burst 10) / 5 QPS = 10s virtual, 1s real.
	between(t, "60 requests at 5 QPS (virtual)", r.Limited.Virtual, 9500*time.Millisecond, 10500*time.Millisecond)
	between(t, "60 requests at 5 QPS (real)", r.Limited.Real, 950*time.Millisecond, 1050*time.Millisecond)
}

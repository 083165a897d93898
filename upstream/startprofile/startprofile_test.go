package startprofile

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		in      string
		window  time.Duration
		wantErr bool
	}{
		{in: "", window: startWindow},
		{in: "90s", window: 90 * time.Second},
		{in: "2m", window: 2 * time.Minute},
		{in: "90", wantErr: true},
		{in: "-5s", wantErr: true},
		{in: "0s", wantErr: true},
	} {
		window, err := settings(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("settings(%q): error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && window != tc.window {
			t.Errorf("settings(%q) = %v; want %v", tc.in, window, tc.window)
		}
	}
}

// TestWindowWritesProfile: with a window set, the CPU and heap profiles are
// complete once that window has passed, before the default window (3 s)
// would have: whole, non-empty gzip streams, as pprof writes.
func TestWindowWritesProfile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	t.Setenv(WindowEnvVar, "300ms")
	FromEnv("test")
	deadline := time.Now().Add(startWindow - 500*time.Millisecond)
	for _, file := range []string{"test.pprof", "test.heap.pprof"} {
		path := filepath.Join(dir, file)
		for {
			n, err := gzipLength(path)
			if err == nil && n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is not a complete profile %v after a 300ms window: %v", path, startWindow-500*time.Millisecond, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// gzipLength is how many bytes the gzip file at path holds once unpacked;
// an error if it is missing, not gzip, or cut short.
func gzipLength(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return 0, err
	}
	return io.Copy(io.Discard, z)
}

// TestAfterDelaysTheWindow: with AfterEnvVar, nothing is written before it
// has passed, and complete profiles after; a bad value profiles nothing.
func TestAfterDelaysTheWindow(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	t.Setenv(WindowEnvVar, "100ms")
	t.Setenv(AfterEnvVar, "soon")
	FromEnv("bad")
	t.Setenv(AfterEnvVar, "500ms")
	start := time.Now()
	FromEnv("late")
	if _, err := os.Stat(filepath.Join(dir, "late.pprof")); err == nil && time.Since(start) < 500*time.Millisecond {
		t.Error("the profile was started before its delay")
	}
	path := filepath.Join(dir, "late.heap.pprof")
	for {
		if n, err := gzipLength(path); err == nil && n > 0 {
			break
		}
		if time.Since(start) > 3*time.Second {
			t.Fatalf("no complete %s 3s after a 500ms delay and a 100ms window", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.pprof")); err == nil {
		t.Errorf("%s=soon profiled all the same", AfterEnvVar)
	}
}

// Package startprofile profiles the start of a cluster's components, for
// work on how fast a cluster comes up: with KUBESIM_PROFILE_START=DIR set
// where kubesim runs, each component writes the CPU profile of its first
// seconds to DIR/NAME.pprof (read it with go tool pprof). With
// KUBESIM_PROFILE_WINDOW=90s as well, the profile covers that long: a
// benchmark's load, not only the start. When the window ends each component
// also writes its heap profile, DIR/NAME.heap.pprof: what it holds then, for
// work on memory (most components serve no pprof endpoint). With
// KUBESIM_PROFILE_AFTER=2m the window starts that long after the
// component: a steady load, without the start and the objects' creation.
package startprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// EnvVar names the directory profiles go to.
const EnvVar = "KUBESIM_PROFILE_START"

// WindowEnvVar sets how long to profile, as a Go duration (90s, 2m).
const WindowEnvVar = "KUBESIM_PROFILE_WINDOW"

// AfterEnvVar sets how long after its start a component starts profiling.
const AfterEnvVar = "KUBESIM_PROFILE_AFTER"

// startWindow covers a start (a few seconds) with room to spare. It is
// sampled at pprof's default 100 a second: CPU timers fire at most once a
// kernel tick (often 250 a second), so a higher rate drops samples and the
// profile's CPU seconds fall short (a start profiled at 1,000 a second
// counted a third of what /proc gave).
const startWindow = 3 * time.Second

// FromEnv starts profiling the component name if EnvVar asks for it.
func FromEnv(name string) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return
	}
	window, err := settings(os.Getenv(WindowEnvVar))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", WindowEnvVar, err)
		return
	}
	var after time.Duration
	if v := os.Getenv(AfterEnvVar); v != "" {
		if after, err = time.ParseDuration(v); err != nil || after < 0 {
			fmt.Fprintf(os.Stderr, "%s: %q is not a duration such as 90s or 2m\n", AfterEnvVar, v)
			return
		}
	}
	if after > 0 {
		time.AfterFunc(after, func() { profile(dir, name, window) })
		return
	}
	profile(dir, name, window)
}

// profile profiles the CPU for window, then writes the heap's profile.
func profile(dir, name string, window time.Duration) {
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", EnvVar, err)
		return
	}
	time.AfterFunc(window, func() {
		pprof.StopCPUProfile()
		_ = f.Close()
		if err := writeHeapProfile(filepath.Join(dir, name+".heap.pprof")); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", EnvVar, err)
		}
	})
}

// writeHeapProfile writes the heap profile as of the last collection.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// settings is the profile's length for a WindowEnvVar value.
func settings(window string) (time.Duration, error) {
	if window == "" {
		return startWindow, nil
	}
	d, err := time.ParseDuration(window)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration such as 90s or 2m", window)
	}
	return d, nil
}

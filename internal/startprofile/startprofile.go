// Package startprofile profiles the start of a cluster's components, for
// work on how fast a cluster comes up: with KUBESIM_PROFILE_START=DIR set
// where kubesim runs, each component writes the CPU profile of its first
// seconds to DIR/NAME.pprof (read it with go tool pprof).
package startprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// EnvVar names the directory profiles go to.
const EnvVar = "KUBESIM_PROFILE_START"

const (
	// window covers a start (about a second) with room to spare.
	window = 3 * time.Second
	// rate is samples a second: a start is too short for pprof's default 100.
	rate = 1000
)

// FromEnv starts profiling the component name if EnvVar asks for it.
func FromEnv(name string) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err == nil {
		runtime.SetCPUProfileRate(rate) // StartCPUProfile keeps a rate already set
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", EnvVar, err)
		return
	}
	time.AfterFunc(window, func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	})
}

// Package version is kubesim's own version and the Kubernetes version its
// components report. The Makefile stamps both at link time; a plain
// `go build` or `go install` gets them from the build's own records.
package version

import "runtime/debug"

// Version of kubesim: stamped by the Makefile (-X …/internal/version.Version=…),
// else the module version `go install` recorded, else "dev".
var Version = "dev"

func init() {
	if Version != "dev" {
		return
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		Version = info.Main.Version
	}
}

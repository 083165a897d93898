package version

import (
	"strings"
)

// Patches lists the patches a build applied to upstream modules, comma
// separated, each as MODULE/FILE under patches/ (k8s.io/apiserver/0002-….patch).
// The Makefile stamps it (-X …/internal/version.Patches=…); a build without
// make compiles the upstream modules as released, and leaves it empty.
var Patches = ""

// PatchesLine says which patches the build applied, in one line.
func PatchesLine() string {
	return patchesLine(Patches)
}

func patchesLine(stamped string) string {
	if stamped == "" {
		return "patches: none (built without make: upstream modules as released)"
	}
	return "patches: " + strings.ReplaceAll(stamped, ",", ", ")
}

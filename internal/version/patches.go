package version

import (
	"slices"
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

// HasPatch says whether the build applied the patch MODULE/FILE: code that
// relies on what a patch adds asks first, so a build without it still works.
func HasPatch(name string) bool {
	return Patches != "" && slices.Contains(strings.Split(Patches, ","), name)
}

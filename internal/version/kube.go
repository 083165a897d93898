package version

import (
	"runtime/debug"
	"strings"
	_ "unsafe" // for go:linkname

	"k8s.io/component-base/version"
)

// The Kubernetes version every upstream component reports. The Makefile
// stamps it at link time (-ldflags -X); a plain `go build` or `go install`
// leaves upstream's placeholder v0.0.0-master, which real clients refuse.
// These name component-base's variables so init can fill them in from the
// build's own record of the k8s.io/kubernetes module version instead.
var (
	//go:linkname gitVersion k8s.io/component-base/version.gitVersion
	gitVersion string
	//go:linkname gitMajor k8s.io/component-base/version.gitMajor
	gitMajor string
	//go:linkname gitMinor k8s.io/component-base/version.gitMinor
	gitMinor string
)

func init() {
	if gitVersion != "" && !strings.HasPrefix(gitVersion, "v0.0.0-master") {
		return // stamped at link time
	}
	if v := kubernetesModuleVersion(); v != "" {
		stampKubernetesVersion(v)
	}
}

// kubernetesModuleVersion is the k8s.io/kubernetes version this binary was
// built from, as the Go toolchain recorded it.
func kubernetesModuleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range info.Deps {
		if dep.Path == "k8s.io/kubernetes" {
			return dep.Version
		}
	}
	return ""
}

// stampKubernetesVersion sets the reported version to v (v1.36.3).
func stampKubernetesVersion(v string) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return
	}
	gitVersion, gitMajor, gitMinor = v, parts[0], parts[1]
	// Get reports a copy of gitVersion taken at init: renew it.
	_ = version.SetDynamicVersion(v)
}

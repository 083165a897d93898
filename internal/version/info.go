package version

import (
	"strings"

	"k8s.io/component-base/version"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Info is what `kubesim version -o json` reports: for people, and for
// programs such as kubesimtest that check which binary they drive.
type Info struct {
	Kubesim    string `json:"kubesim"`
	Kubernetes string `json:"kubernetes"`
	// APIRevision is v1alpha1.Revision of the types this binary reads.
	APIRevision int `json:"apiRevision"`
	// Patches are the patches the build applied (MODULE/FILE), none for a
	// build without make.
	Patches []string `json:"patches"`
	// Clock is the Go runtime patch of the scaled clock (--time-scale),
	// empty for a build without it.
	Clock string `json:"clock,omitempty"`
	// KubernetesVersions are the releases a cluster can run
	// (--kubernetes): Kubernetes and those built beside this binary.
	KubernetesVersions []string `json:"kubernetesVersions"`
}

// Get describes this binary.
func Get() Info {
	patches := []string{}
	if Patches != "" {
		patches = strings.Split(Patches, ",")
	}
	return Info{Kubesim: Version, Kubernetes: version.Get().GitVersion, APIRevision: v1alpha1.Revision, Patches: patches, Clock: Clock}
}

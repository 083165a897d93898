package version

import (
	"testing"

	"k8s.io/component-base/version"
)

func TestStampSetsWhatComponentsReport(t *testing.T) {
	saved := [3]string{gitVersion, gitMajor, gitMinor}
	defer func() { gitVersion, gitMajor, gitMinor = saved[0], saved[1], saved[2] }()

	stampKubernetesVersion("v1.36.3")
	got := version.Get()
	if got.GitVersion != "v1.36.3" || got.Major != "1" || got.Minor != "36" {
		t.Errorf("after stamping v1.36.3 components report %s (major %q, minor %q)", got.GitVersion, got.Major, got.Minor)
	}
}

package cluster

import (
	"strings"
	"testing"
)

// The checks made before asking the component itself (an e2e test covers
// that part: it needs the kubesim binary).
func TestValidateExtraArgsNamesTheField(t *testing.T) {
	for want, extra := range map[string]map[string][]string{
		"extraArgs.etcd: not an upstream component":        {"etcd": {"--v=2"}},
		`extraArgs.kube-scheduler[1]: "v=2" is not a flag`: {"kube-scheduler": {"--v=1", "v=2"}},
		`extraArgs.kube-apiserver[0]: "--" is not a flag`:  {"kube-apiserver": {"--"}},
	} {
		err := validateExtraArgs(extra)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: got %v, want an error containing %q", extra, err, want)
		}
	}
}

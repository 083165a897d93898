package kubesimtest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// Kubernetes(minor) runs that release's control plane: the API server says
// so. The version is one built beside kubesim other than its own when
// there is one (CI builds one other), else its own.
func TestKubernetes(t *testing.T) {
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Kubernetes         string   `json:"kubernetes"`
		KubernetesVersions []string `json:"kubernetesVersions"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	release := info.Kubernetes
	if others := slices.DeleteFunc(info.KubernetesVersions, func(r string) bool { return r == info.Kubernetes }); len(others) > 0 {
		release = others[0]
	}
	minor := strings.Join(strings.SplitN(strings.TrimPrefix(release, "v"), ".", 3)[:2], ".")
	c := Start(t, Kubernetes(minor))
	v, err := kubernetes.NewForConfigOrDie(c.Config()).Discovery().ServerVersion()
	if err != nil || v.GitVersion != release {
		t.Errorf("Kubernetes(%q): the API server is %v (%v), want %s", minor, v, err, release)
	}
}

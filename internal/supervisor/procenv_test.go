package supervisor

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/component"
)

func TestProcessEnvKeepsNoSecrets(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
	t.Setenv("HOME", "/home/me")
	t.Setenv("KUBESIM_PROFILE_WINDOW", "90s")
	env := processEnv(gcPercent)
	if slices.ContainsFunc(env, func(kv string) bool { return strings.Contains(kv, "hunter2") }) {
		t.Errorf("a secret reaches the components: %v", env)
	}
	for _, want := range []string{"HOME=/home/me", "GOGC=" + gcPercent, "KUBESIM_PROFILE_WINDOW=90s"} {
		if !slices.Contains(env, want) {
			t.Errorf("%s missing from %v", want, env)
		}
	}
}

// A component runs on its cluster's clock; without one, on real time.
func TestComponentEnvCarriesTheClustersClock(t *testing.T) {
	comp := component.Component{Name: "x"}
	clock := &v1alpha1.Clock{Scale: 10, Epoch: 1, Anchor: 2}
	env := componentEnv(comp, []component.Component{comp}, &v1alpha1.Cluster{Status: &v1alpha1.ClusterStatus{Clock: clock}})
	for _, want := range clusterclock.Env(clock) {
		if !slices.Contains(env, want) {
			t.Errorf("%s missing from %v", want, env)
		}
	}
	env = componentEnv(comp, []component.Component{comp}, &v1alpha1.Cluster{Status: &v1alpha1.ClusterStatus{}})
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "KUBESIM_TIME_") }) {
		t.Errorf("a clock without the cluster having one: %v", env)
	}
}

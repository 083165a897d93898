package supervisor

import (
	"slices"
	"strings"
	"testing"
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

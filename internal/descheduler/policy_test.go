package descheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyFile writes a policy file for ResolvePolicy to read.
func policyFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestResolvePolicyErrorsNameTheCallersField(t *testing.T) {
	bad := policyFile(t, []byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"))
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	flags := PolicyFields{Policy: "--policy", Profiles: "--profile"}
	config := PolicyFields{Policy: "descheduler.policy", Profiles: "descheduler.profiles"}
	for _, tc := range []struct {
		file     string
		profiles []string
		fields   PolicyFields
		want     string
	}{
		{bad, []string{"LongLifecycle"}, flags, "--policy and --profile: give one or the other"},
		{"", nil, flags, "--profile or --policy: required (profiles: AffinityAndTaints,"},
		{missing, nil, flags, "--policy " + missing + ": open " + missing},
		{bad, nil, flags, "--policy " + bad + ": policy: no profiles"},
		{"", []string{"Nope"}, flags, `--profile: unknown profile "Nope"; use one of`},
		{bad, nil, config, "descheduler.policy " + bad + ": policy: no profiles"},
		{"", []string{"Nope"}, config, `descheduler.profiles: unknown profile "Nope"`},
	} {
		_, err := ResolvePolicy(tc.file, tc.profiles, tc.fields)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ResolvePolicy(%q, %v) = %v, want an error beginning %q", tc.file, tc.profiles, err, tc.want)
		}
	}
}

func TestResolvePolicyReturnsTheFileOrTheProfiles(t *testing.T) {
	profiles, err := ProfilePolicy([]string{"LongLifecycle"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResolvePolicy("", []string{"LongLifecycle"}, PolicyFields{})
	if err != nil || string(got) != string(profiles) {
		t.Errorf("profiles: got %v %q, want the profile's policy", err, got)
	}
	got, err = ResolvePolicy(policyFile(t, profiles), nil, PolicyFields{})
	if err != nil || string(got) != string(profiles) {
		t.Errorf("file: got %v %q, want the file's bytes", err, got)
	}
}

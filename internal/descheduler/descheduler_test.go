package descheduler

import (
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// Every named profile expands to a policy upstream's loader accepts.
func TestProfilesLoad(t *testing.T) {
	for _, name := range Profiles {
		data, err := ProfilePolicy([]string{name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		policy, err := LoadPolicy(data, fake.NewClientset())
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, data)
		}
		if len(policy.Profiles) != 1 || policy.Profiles[0].Name != name {
			t.Errorf("%s: profiles %+v", name, policy.Profiles)
		}
	}
	both, err := ProfilePolicy([]string{"AffinityAndTaints", "CompactAndScale"})
	if err != nil {
		t.Fatal(err)
	}
	var policy struct{ Profiles []struct{ Name string } }
	if err := yaml.Unmarshal(both, &policy); err != nil || len(policy.Profiles) != 2 {
		t.Fatalf("two profiles: %v %+v", err, policy)
	}
	if _, err := ProfilePolicy([]string{"Nope"}); err == nil || !strings.Contains(err.Error(), "LongLifecycle") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestLoadPolicyErrorsNameTheField(t *testing.T) {
	for policy, want := range map[string]string{
		"apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n": "plugin RemoveDuplicates is enabled but has no entry",
		"apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n    balance:\n      enabled: [Nope]\n":             "Nope",
		"apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n":                                                                                    "no profiles",
	} {
		_, err := LoadPolicy([]byte(policy), fake.NewClientset())
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("policy %q: error %v, want one line containing %q", policy, err, want)
		}
	}
}

func TestParseTrigger(t *testing.T) {
	profile, plugin, reason := parseTrigger("triggered by TopologyAndDuplicates/RemoveDuplicates: too many")
	if profile != "TopologyAndDuplicates" || plugin != "RemoveDuplicates" || reason != "too many" {
		t.Errorf("got %q %q %q", profile, plugin, reason)
	}
	if _, plugin, reason := parseTrigger("triggered by p/PodLifeTime: "); plugin != "PodLifeTime" || reason != "" {
		t.Errorf("empty reason: %q %q", plugin, reason)
	}
}

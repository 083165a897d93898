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

func TestSawMarksOnlyTheEvictedPodLeaving(t *testing.T) {
	tp := &tap{}
	gone, other := tp.expectLeaving("uid-1"), tp.expectLeaving("uid-2")
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	for _, event := range []string{
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","uid":"uid-1"},"status":{"phase":"Running"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"b","uid":"uid-3","deletionTimestamp":"2026-11-24T00:00:00Z"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"c","uid":"uid-4","ownerReferences":[{"uid":"uid-2"}]}}}`,
	} {
		tp.saw([]byte(event))
	}
	if closed(gone) || closed(other) {
		t.Fatal("a pod was marked leaving by an event that does not show it terminating")
	}
	tp.saw([]byte(`{"type":"MODIFIED","object":{"metadata":{"name":"a","uid":"uid-1","deletionTimestamp":"2026-11-24T00:00:00Z"}}}`))
	tp.saw([]byte(`{"type":"DELETED","object":{"metadata":{"name":"d","uid":"uid-2"}}}`))
	if !closed(gone) || !closed(other) {
		t.Fatal("terminating or deleted pods not marked leaving")
	}
	if len(tp.leaving) != 0 {
		t.Errorf("still awaited: %v", tp.leaving)
	}
	tp.saw([]byte(`{"type":"DELETED","object":{"metadata":{"uid":"uid-1"}}}`)) // a second event: no double close
}

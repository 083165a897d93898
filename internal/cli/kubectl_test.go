package cli

import (
	"slices"
	"testing"
)

func TestSplitNameFlagTakesOnlyALeadingName(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		name    string
		given   bool
		kubectl []string
	}{
		{[]string{"get", "pods"}, "", false, []string{"get", "pods"}},
		{[]string{"--name", "blue", "get", "pods", "-A"}, "blue", true, []string{"get", "pods", "-A"}},
		{[]string{"--name=red", "get", "ns"}, "red", true, []string{"get", "ns"}},
		{[]string{"--name=", "get", "ns"}, "", true, []string{"get", "ns"}},
		// kubectl's own --name (kubectl expose --name) stays with kubectl.
		{[]string{"expose", "deploy", "x", "--name", "svc"}, "", false, []string{"expose", "deploy", "x", "--name", "svc"}},
	} {
		name, given, rest := splitNameFlag(tc.args)
		if name != tc.name || given != tc.given || !slices.Equal(rest, tc.kubectl) {
			t.Errorf("splitNameFlag(%v) = %q, %v, %v; want %q, %v, %v", tc.args, name, given, rest, tc.name, tc.given, tc.kubectl)
		}
	}
}

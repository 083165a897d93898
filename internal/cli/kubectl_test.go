package cli

import (
	"slices"
	"testing"
)

func TestSplitNameFlagTakesOnlyALeadingName(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		name    string
		kubectl []string
	}{
		{[]string{"get", "pods"}, "", []string{"get", "pods"}},
		{[]string{"--name", "blue", "get", "pods", "-A"}, "blue", []string{"get", "pods", "-A"}},
		{[]string{"--name=red", "get", "ns"}, "red", []string{"get", "ns"}},
		// kubectl's own --name (kubectl expose --name) stays with kubectl.
		{[]string{"expose", "deploy", "x", "--name", "svc"}, "", []string{"expose", "deploy", "x", "--name", "svc"}},
	} {
		name, rest := splitNameFlag(tc.args)
		if name != tc.name || !slices.Equal(rest, tc.kubectl) {
			t.Errorf("splitNameFlag(%v) = %q, %v; want %q, %v", tc.args, name, rest, tc.name, tc.kubectl)
		}
	}
}

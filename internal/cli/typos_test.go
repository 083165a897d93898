package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A typo'd command fails, naming it and the nearest commands, as kubectl
// does, rather than printing help and exiting 0.
func TestUnknownCommandsFailWithSuggestions(t *testing.T) {
	for args, want := range map[string]string{
		"get clusterz":   "unknown command \"clusterz\" for \"kubesim get\"\n\nDid you mean this?\n\tclusters",
		"create clustr":  "unknown command \"clustr\" for \"kubesim create\"\n\nDid you mean this?\n\tcluster",
		"node stp x":     "unknown command \"stp\" for \"kubesim node\"\n\nDid you mean this?\n\tstop",
		"gett clusters":  "unknown command \"gett\" for \"kubesim\"\n\nDid you mean this?\n\tget",
		"snapshot zzzzz": `unknown command "zzzzz" for "kubesim snapshot"; see "kubesim snapshot --help"`,
		"get clusters x": `unknown command "x" for "kubesim get clusters"`,
	} {
		_, _, err := execute(t, strings.Fields(args)...)
		if err == nil || strings.TrimRight(err.Error(), "\n") != want {
			t.Errorf("kubesim %s: %v, want %q", args, err, want)
		}
	}
}

// Every command that holds subcommands refuses one it does not have, and
// run alone fails after its help.
func TestEveryGroupRefusesUnknownAndMissingCommands(t *testing.T) {
	var groups []*cobra.Command
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		if c.HasSubCommands() && c.HasParent() {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(NewRootCommand())
	if len(groups) < 9 {
		t.Fatalf("found %d groups", len(groups))
	}
	for _, g := range groups {
		args := strings.Fields(g.CommandPath())[1:]
		_, _, err := execute(t, append(args, "no-such-command")...)
		if want := `unknown command "no-such-command" for "` + g.CommandPath() + `"`; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("kubesim %s no-such-command: %v, want %q", strings.Join(args, " "), err, want)
		}
		stdout, stderr, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error(), "needs a command") || !strings.Contains(stderr, "Available Commands:") || stdout != "" && g.Name() != "bench" {
			t.Errorf("kubesim %s: %v, stdout %q, stderr %q; want its help on stderr and an error", strings.Join(args, " "), err, stdout, stderr)
		}
	}
}

// A flag value that does not parse is said in the user's words, naming
// the flag and what it takes, not in Go's (strconv.ParseInt: parsing …).
func TestBadFlagValuesNameTheFlag(t *testing.T) {
	for args, want := range map[string]string{
		"scale node --replicas abc":                  `--replicas: "abc" is not a whole number; give one, such as --replicas 3`,
		"create cluster --nodes 1e99":                `--nodes: "1e99" is not a whole number; give one, such as --nodes 3`,
		"start cluster --wait ten":                   `--wait: "ten" is not a duration; give one such as --wait 30s (units ms, s, m, h)`,
		"create cluster --retain=maybe":              `--retain: "maybe" is not true or false; write --retain, or --retain=false`,
		"create cluster --nodes 9999999999999999999": `--nodes: 9999999999999999999 is out of range; give a smaller number`,
	} {
		_, _, err := execute(t, strings.Fields(args)...)
		if err == nil || err.Error() != want {
			t.Errorf("kubesim %s: %v, want %q", args, err, want)
		}
	}
}

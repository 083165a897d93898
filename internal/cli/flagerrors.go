package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError says a flag value that does not parse in the user's words,
// naming the flag and what it takes, rather than Go's ("strconv.ParseInt:
// parsing "abc": invalid syntax"); and an unknown flag with the flags
// nearest it, or, on a command that holds commands, the command it takes.
func flagError(cmd *cobra.Command, err error) error {
	var unknown *pflag.NotExistError
	if errors.As(err, &unknown) {
		return unknownFlag(cmd, unknown)
	}
	var invalid *pflag.InvalidValueError
	if !errors.As(err, &invalid) {
		return err
	}
	flag, value := invalid.GetFlag(), invalid.GetValue()
	name := "--" + flag.Name
	switch flag.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s: %s is out of range; give a smaller number", name, value)
		}
		return fmt.Errorf("%s: %q is not a whole number; give one, such as %s 3", name, value, name)
	case "duration":
		return fmt.Errorf("%s: %q is not a duration; give one such as %s 30s (units ms, s, m, h)", name, value, name)
	case "bool":
		return fmt.Errorf("%s: %q is not true or false; write %s, or %s=false", name, value, name, name)
	case "float32", "float64":
		return fmt.Errorf("%s: %q is not a number; give one, such as %s 0.5", name, value, name)
	}
	return fmt.Errorf("%s: %q: %v", name, value, errors.Unwrap(err))
}

// unknownFlag is pflag's "unknown flag: --node", with what the user more
// likely meant. On a command that holds commands (kubesim delete), the
// word before the flag is the mistake, if there is one: cobra stopped
// there, at a command it does not have (`delete clusters --all`), and
// parsed the rest as the group's own flags.
func unknownFlag(cmd *cobra.Command, err *pflag.NotExistError) error {
	if cmd.HasSubCommands() {
		if typed := cmd.Flags().Args(); len(typed) > 0 {
			return unknownCommand(cmd, typed[0])
		}
		// kubesim create --nodes 3: the flag is a command's of the group.
		var takers []string
		var visit func(*cobra.Command)
		visit = func(c *cobra.Command) {
			for _, sub := range c.Commands() {
				if !sub.IsAvailableCommand() {
					continue
				}
				if !sub.HasSubCommands() && sub.Flags().Lookup(err.GetSpecifiedName()) != nil {
					takers = append(takers, strconv.Quote(sub.CommandPath()))
				}
				visit(sub)
			}
		}
		visit(cmd)
		if len(takers) > 0 && len(takers) <= 3 {
			return fmt.Errorf("%v (a flag of %s)", err, strings.Join(takers, ", "))
		}
		return err
	}
	if !strings.HasPrefix(err.Error(), "unknown flag: --") {
		return err // a shorthand: too short to say which was meant
	}
	if near := nearestFlags(cmd, err.GetSpecifiedName()); len(near) > 0 {
		return fmt.Errorf("%v (did you mean %s?)", err, strings.Join(near, " or "))
	}
	return err
}

// nearestFlags are cmd's flags within two edits of typed (and fewer
// than its length: --x is no typo of --o), the nearest (--node: --nodes).
func nearestFlags(cmd *cobra.Command, typed string) []string {
	best := min(3, len(typed))
	var near []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		switch d := editDistance(typed, f.Name); {
		case d < best:
			best, near = d, []string{"--" + f.Name}
		case d == best:
			near = append(near, "--"+f.Name)
		}
	})
	return near
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

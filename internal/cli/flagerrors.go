package cli

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError says a flag value that does not parse in the user's words,
// naming the flag and what it takes, rather than Go's ("strconv.ParseInt:
// parsing "abc": invalid syntax").
func flagError(_ *cobra.Command, err error) error {
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

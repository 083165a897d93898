package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// outputFormats are what -o takes, the first the default.
var outputFormats = []string{"table", "json", "yaml"}

// output is the -o flag: a table for people, JSON or YAML for programs.
// Any other value is refused while the flags are parsed.
type output string

func (o *output) add(cmd *cobra.Command) {
	*o = output(outputFormats[0])
	cmd.Flags().VarP(o, "output", "o", strings.Join(outputFormats, ", "))
}

func (o *output) String() string { return string(*o) }
func (o *output) Type() string   { return "format" }

func (o *output) Set(s string) error {
	if !slices.Contains(outputFormats, s) {
		return fmt.Errorf("use one of %s", strings.Join(outputFormats, ", "))
	}
	*o = output(s)
	return nil
}

// print writes v to w as JSON or YAML, or calls table to write it as a table.
func (o output) print(w io.Writer, v any, table func(io.Writer) error) error {
	switch o {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return table(w)
}

package component

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Options is the command line of one of kubesim's own components as a
// typed struct. AddFlags declares its flags once, for both directions: the
// supervisor renders a component's arguments from it (Args), the component
// parses them back into it (ParseArgs). AddFlags must use each field's
// current value as the flag's default, so that rendering reads the fields
// rather than resetting them.
type Options interface {
	AddFlags(fs *pflag.FlagSet)
}

// Args renders opts as `--flag=value` arguments that parse back to opts.
func Args(opts Options) []string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	opts.AddFlags(fs)
	var args []string
	fs.VisitAll(func(f *pflag.Flag) {
		values := []string{f.Value.String()}
		if slice, ok := f.Value.(pflag.SliceValue); ok {
			values = slice.GetSlice()
		}
		for _, v := range values {
			args = append(args, "--"+f.Name+"="+v)
		}
	})
	return args
}

// OwnArgs is a Component's Args for typed options derived from the
// cluster config.
func OwnArgs[O Options](options func(clusterdir.Dir, *v1alpha1.Cluster) O) func(clusterdir.Dir, *v1alpha1.Cluster) []string {
	return func(d clusterdir.Dir, c *v1alpha1.Cluster) []string { return Args(options(d, c)) }
}

// ParseArgs parses a component's arguments into opts.
func ParseArgs(component string, opts Options, args []string) error {
	fs := pflag.NewFlagSet(component, pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Main is the Main of one of kubesim's own components: its typed options,
// from defaults, parsed from the command line, then run (RunOwn).
func Main[O any, P interface {
	*O
	Options
}](name string, defaults func() O, run func(context.Context, O) error) func(args []string) int {
	return func(args []string) int {
		opts := defaults()
		return RunOwn(name, P(&opts), args, func(ctx context.Context) error { return run(ctx, opts) })
	}
}

// RunOwn runs one of kubesim's own components: it parses the component's
// typed options from args, then runs it until SIGTERM or SIGINT. A bad
// argument exits 2, a failure 1, each with one line naming the component.
func RunOwn(name string, opts Options, args []string, run func(ctx context.Context) error) int {
	if err := ParseArgs(name, opts, args); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

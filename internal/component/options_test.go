package component

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// testOptions has a scalar, a duration and a list flag.
type testOptions struct {
	Name     string
	Interval time.Duration
	Values   []string
}

func (o *testOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Name, "name", o.Name, "")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "")
	fs.StringSliceVar(&o.Values, "value", o.Values, "")
}

// A typed command line renders to arguments that parse back to it, from
// defaults other than the zero values too.
func TestOptionsRoundTrip(t *testing.T) {
	in := &testOptions{Name: "blue", Interval: 90 * time.Second, Values: []string{"a", "b"}}
	args := Args(in)
	out := &testOptions{Interval: time.Minute, Values: []string{"x"}}
	if err := ParseArgs("test", out, args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("%v parsed back to %+v, want %+v", args, out, in)
	}
}

func TestParseArgsRefusesWhatItDoesNotKnow(t *testing.T) {
	var o testOptions
	if err := ParseArgs("test", &o, []string{"--nmae=x"}); err == nil {
		t.Error("an unknown flag parsed")
	}
	if err := ParseArgs("test", &o, []string{"--name=x", "stray"}); err == nil {
		t.Error("a stray argument parsed")
	}
}

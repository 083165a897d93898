package components

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// While the hold file exists, the pod controllers are left out of the
// --controllers given; without it, --controllers is as given.
func TestHoldPodControllers(t *testing.T) {
	flags := func(args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("kcm", pflag.ContinueOnError)
		fs.StringSlice("controllers", []string{"*"}, "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	held := filepath.Join(t.TempDir(), "pod-controllers.held")
	pods := []string{"replicaset-controller", "job-controller"}

	fs := flags("--controllers=*,-ttl-controller")
	if on, err := holdPodControllers(fs, held, pods); on || err != nil {
		t.Fatalf("no file: held %v, %v", on, err)
	}
	if got, _ := fs.GetStringSlice("controllers"); !slices.Equal(got, []string{"*", "-ttl-controller"}) {
		t.Errorf("no file: --controllers %v", got)
	}

	if err := os.WriteFile(held, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fs = flags("--controllers=*,-ttl-controller")
	if on, err := holdPodControllers(fs, held, pods); !on || err != nil {
		t.Fatalf("file: held %v, %v", on, err)
	}
	if got, _ := fs.GetStringSlice("controllers"); !slices.Equal(got, []string{"*", "-ttl-controller", "-replicaset-controller", "-job-controller"}) {
		t.Errorf("file: --controllers %v", got)
	}
	fs = flags()
	if _, err := holdPodControllers(fs, held, pods); err != nil {
		t.Fatal(err)
	}
	if got, _ := fs.GetStringSlice("controllers"); !slices.Equal(got, []string{"*", "-replicaset-controller", "-job-controller"}) {
		t.Errorf("file, no --controllers given: %v", got)
	}
}

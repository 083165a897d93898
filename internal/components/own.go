package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubesim/kubesim/internal/controlplane"
)

// runOwn runs one of kubesim's own components: it parses the component's
// typed options from args, then runs it until SIGTERM or SIGINT. A bad
// argument exits 2, a failure 1, each with one line naming the component.
func runOwn(name string, opts controlplane.Options, args []string, run func(ctx context.Context) error) int {
	if err := controlplane.ParseArgs(name, opts, args); err != nil {
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

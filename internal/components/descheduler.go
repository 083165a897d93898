package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/descheduler"
)

// runDescheduler runs descheduling cycles every interval with the policy
// (controlplane.DeschedulerOptions) until SIGTERM or SIGINT, logging each
// eviction and refusal.
func runDescheduler(args []string) int {
	opts := controlplane.DefaultDeschedulerOptions()
	if !parseArgs(controlplane.Descheduler, &opts, args) {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := deschedule(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "descheduler:", err)
		return 1
	}
	return 0
}

func deschedule(ctx context.Context, opts controlplane.DeschedulerOptions) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	policy, err := os.ReadFile(opts.Policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	klog.InfoS("descheduler started", "interval", opts.Interval)
	_, err = descheduler.Run(ctx, descheduler.Options{
		Config:   cfg,
		Policy:   policy,
		Interval: opts.Interval,
		OnEviction: func(e descheduler.Eviction) {
			klog.InfoS("eviction", "result", e.Result, "pod", e.Namespace+"/"+e.Pod, "node", e.Node,
				"plugin", e.Plugin, "reason", e.Reason, "message", e.Message)
		},
	})
	return err
}

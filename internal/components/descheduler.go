package components

import (
	"context"
	"fmt"
	"os"

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
	return runOwn(controlplane.Descheduler, &opts, args, func(ctx context.Context) error {
		return deschedule(ctx, opts)
	})
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

package components

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/internal/descheduler"
)

// runDescheduler runs descheduling cycles every --interval with --policy
// until SIGTERM or SIGINT, logging each eviction and refusal.
func runDescheduler(args []string) int {
	fs := pflag.NewFlagSet("descheduler", pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	policyFile := fs.String("policy", "", "descheduler/v1alpha2 DeschedulerPolicy file")
	interval := fs.Duration("interval", time.Minute, "time between descheduling cycles")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "descheduler:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := deschedule(ctx, *kubeconfig, *policyFile, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "descheduler:", err)
		return 1
	}
	return 0
}

func deschedule(ctx context.Context, kubeconfig, policyFile string, interval time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	policy, err := os.ReadFile(policyFile)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	klog.InfoS("descheduler started", "interval", interval)
	_, err = descheduler.Run(ctx, descheduler.Options{
		Config:   cfg,
		Policy:   policy,
		Interval: interval,
		OnEviction: func(e descheduler.Eviction) {
			klog.InfoS("eviction", "result", e.Result, "pod", e.Namespace+"/"+e.Pod, "node", e.Node,
				"plugin", e.Plugin, "reason", e.Reason, "message", e.Message)
		},
	})
	return err
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/explain"
	"github.com/kubesim/kubesim/internal/scenario"
	"github.com/kubesim/kubesim/internal/ui"
)

// uiFlags are how `kubesim ui` (and create's --ui) serves the page.
type uiFlags struct {
	address          string
	port             int
	noOpen, readOnly bool
	drainTimeout     time.Duration
}

func (u *uiFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&u.address, "address", "127.0.0.1", "loopback address to listen on (127.0.0.1 or ::1)")
	cmd.Flags().IntVar(&u.port, "port", 0, "port to listen on (default: a free one)")
	cmd.Flags().BoolVar(&u.noOpen, "no-open", false, "print the URL only; do not open a browser")
	cmd.Flags().BoolVar(&u.readOnly, "read-only", false, "a page that changes nothing: no cordon, drain, node stop/start, scale or descheduler")
	cmd.Flags().DurationVar(&u.drainTimeout, "drain-timeout", 30*time.Second, "how long a drain from the page keeps trying evictions a PodDisruptionBudget refuses")
}

func newUICommand() *cobra.Command {
	f := &clusterFlags{}
	u := &uiFlags{}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve a live web page of a cluster: its nodes and pods, the Pending ones and why",
		Long: "Starts a web server on 127.0.0.1 and prints its URL, which carries a random token: the page is\n" +
			"the cluster's, for whoever has the URL. The page shows the nodes grouped by zone (or any label)\n" +
			"with their pods, coloured by owner, the Pending pods with the scheduler's reason, for a pod what\n" +
			"`kubesim explain pod` shows, and the cluster's events over time; from it you can cordon, drain,\n" +
			"stop and start nodes, scale workloads and run the descheduler once. It follows the cluster live\n" +
			"until Ctrl-C.",
		Example: "  kubesim ui\n  kubesim ui --name prod-clone --no-open --port 8080 --read-only",
		Args:    cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			return u.serve(cmd, p, f.name, f.kubeconfig)
		}),
	}
	f.add(cmd)
	u.add(cmd)
	return cmd
}

// serve serves the page of the cluster name until Ctrl-C.
func (u *uiFlags) serve(cmd *cobra.Command, p *cluster.Provider, name, kubeconfig string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o, err := u.options(p, name, kubeconfig)
	if err != nil {
		return err
	}
	s, err := ui.Listen(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "kubesim UI of cluster %q: %s\n(Ctrl-C stops it)\n", name, s.URL)
	if !u.noOpen {
		openBrowser(s.URL)
	}
	return s.Serve(ctx)
}

// options are the page's of the cluster name.
func (u *uiFlags) options(p *cluster.Provider, name, kubeconfig string) (ui.Options, error) {
	client, kube, err := p.Explainer(name)
	if err != nil {
		return ui.Options{}, err
	}
	k, err := karpenter(p, name)
	if err != nil {
		return ui.Options{}, err
	}
	o := ui.Options{Cluster: name, Address: u.address, Port: u.port, Kube: kube,
		ExplainPod: func(ctx context.Context, namespace, pod string) (*explain.Explanation, error) {
			e, err := explain.Pod(ctx, client, kube, name, namespace, pod)
			if err != nil {
				return nil, err
			}
			return e, k.AddTo(ctx, e)
		}}
	if o.Clock, err = p.Clock(name); err != nil {
		return ui.Options{}, err
	}
	clusterNow := func() time.Time {
		if o.Clock == nil {
			return time.Now()
		}
		return o.Clock.Now(time.Now())
	}
	o.ExplainNode = func(ctx context.Context, node string) (any, string, error) {
		x, err := k.Node(ctx, node, clusterNow())
		if err != nil {
			return nil, "", err
		}
		var text bytes.Buffer
		err = explain.PrintNodeExplanation(&text, x)
		return x, text.String(), err
	}
	if _, err := kube.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err == nil {
		cfg, err := p.RESTConfig(name)
		if err != nil {
			return ui.Options{}, err
		}
		if o.Metrics, err = metricsclient.NewForConfig(cfg); err != nil {
			return ui.Options{}, err
		}
	}
	if !u.readOnly {
		if o.Actions, err = uiActions(p, name, kubeconfig, u.drainTimeout); err != nil {
			return ui.Options{}, err
		}
	}
	return o, nil
}

// runUI is `kubesim run --ui`: the run's page, and a read-only page of
// each cluster it makes, as long as the cluster is there.
type runUI struct {
	ctx  context.Context
	p    *cluster.Provider
	out  io.Writer
	view *ui.RunView
}

// live starts the run's page (scenario.Options.Live).
func (r *runUI) live() (scenario.Live, error) {
	pages := &uiFlags{address: "127.0.0.1", readOnly: true}
	v, err := ui.ListenRun("127.0.0.1", 0, func(name string) (string, func(), error) {
		o, err := pages.options(r.p, name, "")
		if err != nil {
			return "", nil, err
		}
		ctx, cancel := context.WithCancel(r.ctx)
		s, err := ui.Listen(ctx, o)
		if err != nil {
			cancel()
			return "", nil, err
		}
		go func() { _ = s.Serve(ctx) }()
		return s.URL, cancel, nil
	})
	if err != nil {
		return nil, err
	}
	r.view = v
	go func() { _ = v.Serve(r.ctx) }()
	fmt.Fprintf(r.out, "kubesim run's page: %s\n", v.URL)
	openBrowser(v.URL)
	return v, nil
}

// uiActions are the page's actions, as the CLI does them, through the
// user's own credentials: the kubeconfig's context for the cluster.
func uiActions(p *cluster.Provider, name, kubeconfig string, drainTimeout time.Duration) (*ui.Actions, error) {
	kubeContext := "kubesim-" + name
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig, Precedence: clientcmd.NewDefaultClientConfigLoadingRules().Precedence},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the page acts with your kubeconfig's context %s, which cannot be used (%v); kubesim start cluster --name %s writes it again, or give --read-only", kubeContext, err, name)
	}
	user, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	setState := func(stopped bool) func(context.Context, string) (string, error) {
		return func(ctx context.Context, node string) (string, error) {
			var out bytes.Buffer
			err := setNodeState(ctx, p, name, user, node, stopped, false, &out)
			return out.String(), err
		}
	}
	return &ui.Actions{Client: user, StopNode: setState(true), StartNode: setState(false), DrainTimeout: drainTimeout,
		Profiles: descheduler.Profiles,
		Deschedule: func(ctx context.Context, profile string) (string, error) {
			policy, err := descheduler.ResolvePolicy("", []string{profile}, descheduler.PolicyFields{Profiles: "profile"})
			if err != nil {
				return "", err
			}
			report, err := descheduler.Run(ctx, descheduler.Options{Config: cfg, Policy: policy})
			if err != nil {
				return "", err
			}
			var out bytes.Buffer
			err = printReport(&out, report)
			return out.String(), err
		}}, nil
}

// openBrowser opens url in the desktop's browser, when there is a desktop.
func openBrowser(url string) {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	if xdg, err := exec.LookPath("xdg-open"); err == nil {
		_ = exec.Command(xdg, url).Start()
	}
}

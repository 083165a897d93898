package controlplane

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
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

// SupervisorOptions is the command line of a cluster's supervisor.
type SupervisorOptions struct {
	Home string // kubesim's home directory
	Name string // the cluster's name
}

func (o *SupervisorOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Home, "home", o.Home, "kubesim home directory")
	fs.StringVar(&o.Name, "name", o.Name, "cluster name")
}

// EtcdOptions is the command line of the etcd component: a single member
// serving only TLS clients that hold a certificate of the cluster's CA.
type EtcdOptions struct {
	DataDir   string
	ClientURL string
	// ClientSocket, if set, is a unix socket etcd also serves clients on,
	// without TLS: the API server's way in (see EtcdSocket).
	ClientSocket  string
	PeerURL       string
	CertFile      string
	KeyFile       string
	TrustedCAFile string
}

func (o *EtcdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "etcd data directory")
	fs.StringVar(&o.ClientURL, "listen-client-url", o.ClientURL, "https URL clients connect to")
	fs.StringVar(&o.ClientSocket, "listen-client-socket", o.ClientSocket, "unix socket to serve clients on without TLS (its directory's permissions guard it)")
	fs.StringVar(&o.PeerURL, "listen-peer-url", o.PeerURL, "https URL of the (single) peer endpoint")
	fs.StringVar(&o.CertFile, "cert-file", o.CertFile, "serving certificate")
	fs.StringVar(&o.KeyFile, "key-file", o.KeyFile, "serving key")
	fs.StringVar(&o.TrustedCAFile, "trusted-ca-file", o.TrustedCAFile, "CA that signs client certificates")
}

// DeschedulerOptions is the command line of the descheduler component.
type DeschedulerOptions struct {
	Kubeconfig string
	Policy     string // a descheduler/v1alpha2 DeschedulerPolicy file
	Interval   time.Duration
}

// DefaultDeschedulerOptions are the descheduler component's defaults.
func DefaultDeschedulerOptions() DeschedulerOptions {
	return DeschedulerOptions{Interval: time.Minute}
}

func (o *DeschedulerOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the cluster")
	fs.StringVar(&o.Policy, "policy", o.Policy, "descheduler/v1alpha2 DeschedulerPolicy file")
	fs.DurationVar(&o.Interval, "interval", o.Interval, "time between descheduling cycles")
}

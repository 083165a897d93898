// Package component is the description of one process of a cluster's
// control plane, as the package that owns the process declares it: its
// name, command line, readiness, the files it reads, its client identity
// and what it must be granted. internal/controlplane assembles the table
// from these entries; the supervisor runs it. Feature packages import this
// leaf, never the table.
package component

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Component is one process of the control plane.
type Component struct {
	Name string
	// Main is the process's entry point (`kubesim component NAME ARGS`,
	// internal/entrypoint), returning its exit code: component.Main for
	// typed options, an upstream command for the upstream components.
	Main func(args []string) int
	// Args are the arguments after `kubesim component NAME`, derived from
	// the cluster config each time the component (re)starts.
	Args func(d clusterdir.Dir, c *v1alpha1.Cluster) []string
	// Flags are `kubesim create cluster`'s flags of the cluster options the
	// component reads (its fields of ClusterSpec), beside the CLI's own.
	Flags []Flag
	// Enabled, if set, says whether the cluster runs the component;
	// otherwise it always does.
	Enabled func(c *v1alpha1.Cluster) bool
	// Ready, if set, must succeed before the next component starts.
	Ready func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Setup, if set, runs once the component is ready, before the next
	// starts; it is retried until it succeeds.
	Setup func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Serve, if set, runs in the supervisor once Setup is done, for as long
	// as the cluster runs: a controller of kubesim's own that needs the
	// admin's rights (granting the simulator the kinds of Stages).
	Serve func(ctx context.Context, d clusterdir.Dir, logf func(string, ...any))
	// Prepare, if set, writes the files the component reads before each
	// start.
	Prepare func(d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Ports names the loopback ports the component binds ("" for its
	// main one): each cluster gets one of each (Cluster.Status.Ports,
	// under the component's name), chosen at create or, for a cluster
	// made before the component had it, at start; the supervisor moves one
	// another process took.
	Ports []string
	// Routes are ports of the cluster's nodes or pods that the component
	// serves on a unix socket: the API server's connections to them (its
	// node proxy, a scrape) go there through the egress proxy.
	Routes []Route
	// PortsPrivate: no other component uses its ports, so none restarts
	// when they move (the API server reaches etcd by its unix socket).
	PortsPrivate bool
	// Barrier: the component starts once every earlier one is ready and
	// set up, and every later one waits for it to be ready and set up
	// before its own readiness is awaited (etcd; the API server, which the
	// rest need). Past the last barrier, components start side by side.
	Barrier bool
	// StartAfter, if set, names an earlier component: this one's process
	// starts as soon as that one is ready (and set up), not in its turn;
	// its own Ready and Setup still wait for its turn. For a component whose
	// start-up takes long and needs nothing, and which waits for the API
	// itself.
	StartAfter string
	// HeldDuringOutages: the supervisor stops the component while the API
	// server does not answer and starts it afresh when it does.
	HeldDuringOutages bool
	// MemoryWeight is the component's share of the cluster's memory
	// budget, relative to the others the cluster runs.
	MemoryWeight int64
	// GCPercent, if set, is the process's GOGC instead of kubesim's 400.
	GCPercent string
	// Quiet matches lines of the component's output that are expected
	// and harmless in a kubesim cluster: the supervisor leaves them out of
	// its log, so what is left there is news.
	Quiet []*regexp.Regexp

	// Identity, if set, is the client the component is to the API server:
	// a certificate and a kubeconfig are made for it.
	Identity *Identity
	// ClientCerts are client certificates of the cluster's CA the
	// component presents to others than the API server (no kubeconfig is
	// made for them): the API server's, to kubesim's webhooks.
	ClientCerts []Identity
	// Grants are the RBAC roles the API server's bootstrap binds, before
	// any component starts. They are granted whether or not the cluster
	// runs the component, as are its CRDs, unless OnlyIfRun.
	Grants []Grant
	// ServingCerts are the certificates of the loopback endpoints the
	// component serves, issued by the cluster's CA at create.
	ServingCerts []ServingCert
	// CRDs are CustomResourceDefinition manifests bootstrap installs and
	// waits to be served.
	CRDs [][]byte
	// Conversion, if set, is the conversion of the component's CRD named
	// crd (nil: the manifest's own), written in at install, before the
	// component starts: a CRD changed later ends the running component's
	// watches of its kind, which it may not recover from at once.
	Conversion func(d clusterdir.Dir, c *v1alpha1.Cluster, crd string) (*apiextensionsv1.CustomResourceConversion, error)
	// OnlyIfRun: the component's CRDs and grants are written only to a
	// cluster that runs it (an add-on such as the autoscaler, which a
	// cluster without it must not show), not to every cluster.
	OnlyIfRun bool
}

// IsEnabled reports whether the cluster runs the component.
func (comp Component) IsEnabled(c *v1alpha1.Cluster) bool {
	return comp.Enabled == nil || comp.Enabled(c)
}

// Identity is a client identity of the cluster's CA: pki/File.{crt,key}
// and a kubeconfig of the same name, for User in Groups.
type Identity struct {
	File   string
	User   string
	Groups []string
}

// Route sends the API server's connections to Port, on any node or pod
// address, to the unix socket Socket; Down says who serves it, when the
// socket is there and does not answer.
type Route struct {
	Port   int
	Socket func(d clusterdir.Dir) string
	Down   string
}

// ServingCert is pki/Name.{crt,key}: a certificate for 127.0.0.1 with
// CommonName, and for DNSNames (the name of a Service the API server
// verifies it by, for an aggregated API).
type ServingCert struct {
	Name       string
	CommonName string
	DNSNames   []string
}

// Grant binds a ClusterRole (a manifest) to a user: cluster-wide, or in
// Namespace only. User defaults to the component's identity's.
type Grant struct {
	Role      []byte
	User      string
	Namespace string
}

// Listening is a Ready that passes once the component's port of that name
// ("" its main one) accepts connections on loopback.
func Listening(component, port string) func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return func(ctx context.Context, _ clusterdir.Dir, c *v1alpha1.Cluster) error {
		addr := net.JoinHostPort(loopback, strconv.Itoa(c.Status.Ports.Get(component, port)))
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}

// loopback is where every component listens (credentials.Loopback, which
// imports this package).
const loopback = "127.0.0.1"

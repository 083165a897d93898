package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

// The API server reaches nodes, pods and Services (kubectl logs, exec,
// attach, port-forward, the proxy subresources, webhooks) through an HTTP
// CONNECT proxy on a unix socket that the supervisor serves. Simulated
// pods do not exist, so they get a clear refusal at once instead of a DNS
// error or a hang, and nothing simulated ever reaches off this machine:
// only loopback addresses (a user's own webhook server, say) are connected
// through. A port a component declares a Route for (usage-metrics: a
// node's kubelet port, for KWOK's Metric paths) is connected to that
// component's socket; without the component a kubelet port is refused
// here.

const egressConfig = `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`

// egressSocket and egressConfigFile live in the cluster's directory.
func egressSocket(d clusterdir.Dir) string     { return filepath.Join(d.Path, "egress.sock") }
func egressConfigFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "egress-selector.yaml") }

// maxSocketPath is the longest path a unix socket can have (sun_path
// holds 108 bytes with the closing NUL).
const maxSocketPath = 107

// CheckSocketPath fails if the cluster's directory is too deep for its
// sockets (the egress proxy's, the kubelet port's, the longer), which could
// then never be served.
func CheckSocketPath(d clusterdir.Dir) error {
	if sock := d.KubeletSocket(); len(sock) > maxSocketPath {
		return fmt.Errorf("the cluster's socket %s would be %d bytes long, and unix sockets allow %d: "+
			"set KUBESIM_HOME to a shorter directory, or choose a shorter --name", sock, len(sock), maxSocketPath)
	}
	return nil
}

// ServeEgress serves the proxy until ctx ends (the API server's Prepare
// writes its configuration), with the routes of the components the
// cluster runs.
func ServeEgress(ctx context.Context, d clusterdir.Dir, routes []component.Route, logf func(string, ...any)) error {
	copied, err := readCopiedPorts(d)
	if err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}
	sock := egressSocket(d)
	_ = os.Remove(sock) // left by a supervisor that was killed
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go handleConnect(conn, d, routes, copied, logf)
		}
	}()
	return nil
}

// handleConnect answers one CONNECT: to a routed port by its socket, to
// loopback by TCP, to the rest with a refusal.
func handleConnect(conn net.Conn, d clusterdir.Dir, routes []component.Route, copied map[string]bool, logf func(string, ...any)) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		fmt.Fprint(conn, "HTTP/1.1 400 kubesim egress proxy: expected CONNECT\r\n\r\n")
		return
	}
	host, port, err := net.SplitHostPort(req.Host)
	if err != nil {
		fmt.Fprint(conn, "HTTP/1.1 400 kubesim egress proxy: bad address\r\n\r\n")
		return
	}
	var target net.Conn
	for _, r := range routes {
		if port != strconv.Itoa(r.Port) {
			continue
		}
		target, err = net.DialTimeout("unix", r.Socket(d), time.Second)
		// No socket: its component is not serving (yet), and the port is
		// refused below. A socket that does not answer: it is restarting
		// or stuck.
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(conn, "HTTP/1.1 502 kubesim: %s (%v)\r\n\r\n", r.Down, err)
			return
		}
		break
	}
	if target == nil {
		why := refusal(host, port)
		if why == "" && copied[port] {
			why = "port " + port + " is the copied cluster's: its copy does not call its webhooks or APIs"
		}
		if why != "" {
			fmt.Fprintf(conn, "HTTP/1.1 501 kubesim: %s\r\n\r\n", why)
			return
		}
		target, err = net.DialTimeout("tcp", req.Host, 10*time.Second)
		if err != nil {
			fmt.Fprintf(conn, "HTTP/1.1 502 kubesim egress proxy: %v\r\n\r\n", err)
			return
		}
		logf("egress: connected %s", req.Host) // not scrapes of nodes: each would be a line
	}
	defer target.Close()
	fmt.Fprint(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(target, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, target); done <- struct{}{} }()
	<-done
}

// CopiedPortsFile, in a copy of a cluster (cluster.Fork), lists that
// cluster's loopback ports, one a line. The copy's webhook configurations
// and APIServices, copied with its objects, point there until its own
// components register theirs: its egress proxy refuses them, so that the
// copy never calls the cluster's servers (nor floods their logs with
// refusals of its credentials).
func CopiedPortsFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "copied-ports") }

func readCopiedPorts(d clusterdir.Dir) (map[string]bool, error) {
	data, err := os.ReadFile(CopiedPortsFile(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ports := map[string]bool{}
	for _, p := range strings.Fields(string(data)) {
		ports[p] = true
	}
	return ports, nil
}

// refusal says why the proxy will not connect to host:port, or "" if it will.
func refusal(host, port string) string {
	if port == strconv.Itoa(kubeletsim.DefaultKubeletPort) {
		return kubeletsim.Refusal(host)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Sprintf("%s is simulated (a node, pod or Service of this cluster): nothing serves it, "+
			"and kubesim connects to nothing off this machine", net.JoinHostPort(host, port))
	}
	return ""
}

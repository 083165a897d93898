package controlplane

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/usage"
)

// Simulated kubelets, nodes and pods are refused, and so is every address
// off this machine; loopback is connected through.
func TestEgressRefusesAllButLoopback(t *testing.T) {
	for _, tc := range []struct{ host, port, want string }{
		{"10.64.0.1", "10250", "node 10.64.0.1 is simulated"},
		{"node-000000", "10250", "node node-000000 is simulated"},
		{"10.0.3.7", "8080", "is simulated"},     // a pod
		{"node-000000", "8080", "is simulated"},  // no DNS lookups
		{"93.184.216.34", "443", "is simulated"}, // off the machine
		{"127.0.0.1", "9443", ""},
		{"::1", "9443", ""},
	} {
		if got := refusal(tc.host, tc.port); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("refusal(%s, %s) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
}

func TestCheckSocketPath(t *testing.T) {
	if err := CheckSocketPath(clusterdir.For("/home/me/.kubesim", "blue")); err != nil {
		t.Errorf("a usual home: %v", err)
	}
	deep := clusterdir.For("/"+strings.Repeat("d", 90), "blue")
	if err := CheckSocketPath(deep); err == nil || !strings.Contains(err.Error(), "KUBESIM_HOME") {
		t.Errorf("a home too deep for a unix socket: %v", err)
	}
}

// A node's kubelet port is connected to the kubelet socket while
// usage-metrics serves it, refused without it, and said to be down when
// the socket is there and nothing answers.
func TestEgressKubeletPort(t *testing.T) {
	home, err := os.MkdirTemp("", "ks") // short: a unix socket's path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	d := clusterdir.For(home, "blue")
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	connect := func() string {
		t.Helper()
		client, server := net.Pipe()
		defer client.Close()
		go handleConnect(server, d, usage.Component().Routes, nil, t.Logf)
		fmt.Fprint(client, "CONNECT 10.64.0.1:10250 HTTP/1.1\r\nHost: 10.64.0.1:10250\r\n\r\n")
		status, err := bufio.NewReader(client).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	if got := connect(); !strings.Contains(got, "501") || !strings.Contains(got, "node 10.64.0.1 is simulated") {
		t.Errorf("without the kubelet socket: %q", got)
	}
	l, err := net.Listen("unix", d.KubeletSocket())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if got := connect(); !strings.Contains(got, "200") {
		t.Errorf("with the kubelet socket: %q", got)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // the socket stays, nothing answers: a usage-metrics that died
	if got := connect(); !strings.Contains(got, "502") || !strings.Contains(got, "usage-metrics") {
		t.Errorf("with a socket nothing answers: %q", got)
	}
}

// A copy of a cluster refuses the copied cluster's ports, and connects
// other loopback ports (a webhook a user serves there) as any cluster.
func TestEgressRefusesTheCopiedClustersPorts(t *testing.T) {
	d := clusterdir.For(t.TempDir(), "copy")
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(CopiedPortsFile(d), []byte("41000\n41001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	copied, err := readCopiedPorts(d)
	if err != nil {
		t.Fatal(err)
	}
	open, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	go func() {
		for {
			c, err := open.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	connect := func(addr string) string {
		t.Helper()
		client, server := net.Pipe()
		defer client.Close()
		go handleConnect(server, d, nil, copied, t.Logf)
		fmt.Fprintf(client, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
		status, err := bufio.NewReader(client).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	if got := connect("127.0.0.1:41001"); !strings.Contains(got, "501") || !strings.Contains(got, "port 41001 is the copied cluster's") {
		t.Errorf("the copied cluster's port: %q", got)
	}
	if got := connect(open.Addr().String()); !strings.Contains(got, "200") {
		t.Errorf("another loopback port: %q", got)
	}
}

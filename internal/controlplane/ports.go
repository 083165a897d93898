package controlplane

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/credentials"
)

// PortFree reports whether a loopback port can be bound now.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(credentials.Loopback, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// FreePorts returns n distinct free loopback ports, none of them in avoid.
func FreePorts(n int, avoid []int) ([]int, error) {
	seen := map[int]bool{}
	for _, p := range avoid {
		seen[p] = true
	}
	var ports []int
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts > 100 {
			return nil, errors.New("could not find free loopback ports")
		}
		l, err := net.Listen("tcp", credentials.Loopback+":0")
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// AssignPorts gives the cluster a loopback port for each port a component
// of the table declares and the cluster lacks: all of them at create, and
// at start those of components a cluster made by an older kubesim did not
// have. The API server's is the one the user asked for
// (networking.apiServerPort), else a free one, as the rest.
func AssignPorts(c *v1alpha1.Cluster) error {
	for _, comp := range Components() {
		for _, name := range comp.Ports {
			if c.Status.Ports.Get(comp.Name, name) != 0 {
				continue
			}
			port := 0
			if comp.Name == KubeAPIServer && name == "" {
				port = c.Networking.APIServerPort
			}
			if port == 0 {
				free, err := FreePorts(1, append(UsedPorts(c), c.Networking.APIServerPort))
				if err != nil {
					return err
				}
				port = free[0]
			}
			c.Status.Ports.Set(comp.Name, name, port)
		}
	}
	return nil
}

// UsedPorts are the cluster's ports.
func UsedPorts(c *v1alpha1.Cluster) []int { return c.Status.Ports.Numbers() }

// etcdPeerPort is etcd's second port (its first serves clients).
const etcdPeerPort = "peer"

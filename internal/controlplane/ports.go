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

// AssignPorts chooses the loopback ports of a new cluster: the API server's
// as the user asked (0: any free one), and free ones for the rest.
func AssignPorts(c *v1alpha1.Cluster) (v1alpha1.Ports, error) {
	ports, err := FreePorts(6, []int{c.Networking.APIServerPort})
	if err != nil {
		return v1alpha1.Ports{}, err
	}
	if c.Networking.APIServerPort != 0 {
		ports[0] = c.Networking.APIServerPort
	}
	return v1alpha1.Ports{APIServer: ports[0], Etcd: ports[1], EtcdPeer: ports[2], DPDBWebhook: ports[3], SchedulerExplain: ports[4], UsageMetrics: ports[5]}, nil
}

func UsedPorts(c *v1alpha1.Cluster) []int {
	p := c.Status.Ports
	return []int{p.APIServer, p.Etcd, p.EtcdPeer, p.DPDBWebhook, p.SchedulerExplain, p.UsageMetrics}
}

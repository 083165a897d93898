package controlplane

import (
	"net"
	"testing"
)

func TestFreePortsAreDistinctFreeAndAvoidTheGiven(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	if PortFree(taken) {
		t.Fatalf("PortFree(%d) while it is listened on", taken)
	}
	ports, err := FreePorts(5, []int{taken})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == taken || seen[p] {
			t.Errorf("port %d repeated or taken: %v", p, ports)
		}
		seen[p] = true
		if !PortFree(p) {
			t.Errorf("port %d is not free", p)
		}
	}
}

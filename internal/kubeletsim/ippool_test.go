package kubeletsim

import (
	"net"
	"testing"
)

func TestIPPoolUniqueStableRecycledAndExhausted(t *testing.T) {
	p, err := newIPPool("10.0.3.0/29") // 6 usable: .1 … .6
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, key := range []string{"a", "b", "c", "d", "e", "f"} {
		ip, err := p.Get(key)
		if err != nil {
			t.Fatalf("Get(%s): %v", key, err)
		}
		if other, dup := seen[ip.String()]; dup {
			t.Fatalf("%s and %s both got %s", other, key, ip)
		}
		seen[ip.String()] = key
		if ip.Equal(net.ParseIP("10.0.3.0")) || ip.Equal(net.ParseIP("10.0.3.7")) {
			t.Errorf("handed out network or broadcast address %s", ip)
		}
	}
	again, _ := p.Get("c")
	if seen[again.String()] != "c" {
		t.Errorf("Get is not stable for a key: c got %s", again)
	}
	if _, err := p.Get("g"); err == nil {
		t.Fatal("a full pool handed out a seventh address")
	}
	freed, _ := p.Get("b")
	p.Release("b")
	got, err := p.Get("g")
	if err != nil || !got.Equal(freed) {
		t.Errorf("after releasing b (%s), g got %s, %v", freed, got, err)
	}
}

func TestIPPoolOccupyKeepsAddressesFromBeingReused(t *testing.T) {
	p, _ := newIPPool("10.0.4.0/30") // 2 usable
	p.Occupy("running", net.ParseIP("10.0.4.1"))
	p.Occupy("elsewhere", net.ParseIP("192.168.0.1")) // outside: ignored
	ip, err := p.Get("new")
	if err != nil || !ip.Equal(net.ParseIP("10.0.4.2")) {
		t.Errorf("new pod got %s, %v; want the one free address 10.0.4.2", ip, err)
	}
	if p.InUse() != 2 {
		t.Errorf("%d in use, want 2", p.InUse())
	}
}

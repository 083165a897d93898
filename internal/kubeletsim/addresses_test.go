package kubeletsim

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

func cidrNode(name, cidr, pods string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: cidr}}
	if pods != "" {
		n.Status.Capacity = corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods)}
	}
	return n
}

func addressSim(t *testing.T, podIPRange string) *Simulator {
	t.Helper()
	opts := DefaultOptions()
	opts.PodIPRange = podIPRange
	opts.ManageAllNodes = true
	opts.Config = &rest.Config{Host: "https://127.0.0.1:1"}
	s, err := newSimulator(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A node without a podCIDR gives its pods no address from elsewhere: they
// wait for the CIDR, unless the simulator was given a range for that.
func TestNoAddressOutsideTheNodesCIDR(t *testing.T) {
	s := addressSim(t, "")
	if _, err := s.podPool(cidrNode("a", "", "")); err == nil || !strings.Contains(err.Error(), "node a has no podCIDR yet; its pods wait for one") {
		t.Errorf("no podCIDR: %v, want the pods to wait", err)
	}
	pool, err := s.podPool(cidrNode("a", "10.0.4.0/22", ""))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range 1022 {
		ip, err := pool.Get(fmt.Sprint("pod-", i))
		if err != nil {
			t.Fatalf("address %d of a /22: %v", i, err)
		}
		if !pool.cidr.Contains(ip) || seen[ip.String()] {
			t.Fatalf("address %s outside 10.0.4.0/22 or given twice", ip)
		}
		seen[ip.String()] = true
	}
	if _, err := pool.Get("one-more"); err == nil {
		t.Error("a /22 gave a 1,023rd address")
	}

	s = addressSim(t, "10.250.0.0/24")
	if pool, err := s.podPool(cidrNode("b", "", "")); err != nil || pool.cidr.String() != "10.250.0.0/24" {
		t.Errorf("with --pod-ip-range: %v, %v", pool, err)
	}
}

func TestPodCIDRTooSmallWarnsOnce(t *testing.T) {
	s := addressSim(t, "")
	events := record.NewFakeRecorder(10)
	s.recorder = events
	s.checkPodCIDR(cidrNode("fits", "10.0.4.0/22", "1022"))
	s.checkPodCIDR(cidrNode("waits", "", "5000"))
	big := cidrNode("big", "10.0.8.0/24", "400")
	s.checkPodCIDR(big)
	s.checkPodCIDR(big) // an update: no second event
	close(events.Events)
	var got []string
	for e := range events.Events {
		got = append(got, e)
	}
	want := "Warning PodCIDRTooSmall node big declares pods: 400 but its podCIDR 10.0.8.0/24 holds 254 pod addresses"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], "--node-cidr-mask-size") {
		t.Errorf("events %q, want one starting %q and naming --node-cidr-mask-size", got, want)
	}
}

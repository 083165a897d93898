package kubeletsim

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// occupyAddresses marks the node and pod addresses found in the cache as
// taken, so a restarted simulator hands out no address twice.
func (s *Simulator) occupyAddresses() {
	nodes, _ := s.nodeLister.List(labels.Everything())
	for _, node := range nodes {
		if !s.nodeFilter(node) {
			continue
		}
		if ip := internalIP(node); ip != nil {
			s.nodeIPs.Occupy(node.Name, ip)
		}
	}
	pods, _ := s.podLister.List(labels.Everything())
	for _, pod := range pods {
		node, err := s.nodeLister.Get(pod.Spec.NodeName)
		if err != nil || !s.nodeFilter(node) {
			continue
		}
		s.occupyPodAddresses(node, []any{pod})
	}
}

// occupyPodAddresses marks the addresses of pods (of node) as taken:
// another simulator may have given them while it managed the node.
func (s *Simulator) occupyPodAddresses(node *corev1.Node, pods []any) {
	for _, obj := range pods {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Status.PodIP == "" || pod.Spec.HostNetwork {
			continue
		}
		if pool, err := s.podPool(node); err == nil {
			pool.Occupy(string(pod.UID), net.ParseIP(pod.Status.PodIP))
		}
	}
}

// podAdded takes the address of a pod that comes with one as used: a
// clone writes its pods with the addresses its Starter gave them.
func (s *Simulator) podAdded(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Status.PodIP == "" {
		return
	}
	if node, err := s.nodeLister.Get(pod.Spec.NodeName); err == nil && s.nodeFilter(node) {
		s.occupyPodAddresses(node, []any{pod})
	}
}

func internalIP(node *corev1.Node) net.IP {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return net.ParseIP(a.Address)
		}
	}
	return nil
}

// nodeIP is the node's InternalIP: the one it reports, or a new one.
func (s *Simulator) nodeIP(node *corev1.Node) (string, error) {
	if ip := internalIP(node); ip != nil {
		s.nodeIPs.Occupy(node.Name, ip)
		return ip.String(), nil
	}
	share, shares := 0, 1
	if s.members != nil {
		share, shares = s.members.current.Load().index(s.opts.Holder)
	}
	ip, err := s.nodeIPs.GetShare(node.Name, share, shares)
	if err != nil {
		return "", fmt.Errorf("node addresses: %w", err)
	}
	return ip.String(), nil
}

// podPool is the address pool of a node: its podCIDR, or, if it has none
// and --pod-ip-range was given (a cluster that allocates no node CIDRs),
// that shared range. Without either the node's pods wait for its podCIDR:
// an address from elsewhere could be one a node's CIDR later holds.
func (s *Simulator) podPool(node *corev1.Node) (*ipPool, error) {
	if node.Spec.PodCIDR == "" {
		if s.fallbackIPs == nil {
			return nil, fmt.Errorf("node %s has no podCIDR yet; its pods wait for one (kube-controller-manager allocates them with --allocate-node-cidrs from --cluster-cidr; a cluster that allocates none needs kubelet-sim --pod-ip-range)", node.Name)
		}
		return s.fallbackIPs, nil
	}
	return s.podPools.of(node)
}

// podDeleted returns a deleted pod's address to its node's pool.
func (s *Simulator) podDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	s.claims.forget(pod.UID)
	if s.fallbackIPs != nil {
		s.fallbackIPs.Release(string(pod.UID))
	}
	if pool := s.podPools.made(pod.Spec.NodeName); pool != nil {
		pool.Release(string(pod.UID))
	}
}

func (s *Simulator) nodeIPByName(name string) (string, error) {
	node, err := s.nodeLister.Get(name)
	if err != nil {
		return "", fmt.Errorf("node %s: %w", name, err)
	}
	return s.nodeIP(node)
}

// podIP is a pod's address: its node's for hostNetwork pods, else one of
// the node's pod range, the same for the pod's UID until it is deleted.
func (s *Simulator) podIP(nodeName string, hostNetwork bool, uid string) (string, error) {
	if hostNetwork {
		return s.nodeIPByName(nodeName)
	}
	node, err := s.nodeLister.Get(nodeName)
	if err != nil {
		return "", fmt.Errorf("node %s: %w", nodeName, err)
	}
	pool, err := s.podPool(node)
	if err != nil {
		return "", err
	}
	ip, err := pool.Get(uid)
	if err != nil {
		return "", fmt.Errorf("node %s: pod addresses exhausted: %w", nodeName, err)
	}
	return ip.String(), nil
}

// one is a single address as the list the *IPsWith helpers return.
func one(s string, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

// checkPodCIDR warns, once per node and podCIDR, of a node that declares
// more pods than its podCIDR has addresses: the pods beyond them would
// stay Pending.
func (s *Simulator) checkPodCIDR(node *corev1.Node) {
	cidr := node.Spec.PodCIDR
	pods, ok := node.Status.Capacity[corev1.ResourcePods]
	if cidr == "" || !ok || s.recorder == nil {
		return
	}
	s.mu.Lock()
	checked := s.checkedCIDRs[node.Name] == cidr
	s.checkedCIDRs[node.Name] = cidr
	s.mu.Unlock()
	if checked {
		return
	}
	_, n, err := net.ParseCIDR(cidr)
	if err != nil || n.IP.To4() == nil {
		return
	}
	ones, bits := n.Mask.Size()
	addresses := int64(1)<<(bits-ones) - 2
	if pods.Value() <= addresses {
		return
	}
	s.recorder.Eventf(node, corev1.EventTypeWarning, "PodCIDRTooSmall",
		"node %s declares pods: %d but its podCIDR %s holds %d pod addresses: pods beyond them stay Pending; give nodes larger CIDRs (kube-controller-manager --node-cidr-mask-size; kubesim: networking.nodeCIDRMaskSize) or lower the node's pods capacity",
		node.Name, pods.Value(), cidr, addresses)
}

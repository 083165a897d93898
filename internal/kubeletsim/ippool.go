package kubeletsim

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// ipPool hands out the addresses of one CIDR, one per key (a pod's UID, a
// node's name), and takes them back for reuse. The network and broadcast
// addresses are never handed out.
type ipPool struct {
	mu    sync.Mutex
	cidr  *net.IPNet
	first uint32 // first usable address
	size  uint32 // usable addresses
	next  uint32 // offset to try next, so freed addresses rest a while
	byKey map[string]uint32
	inUse map[uint32]string
}

func newIPPool(cidr string) (*ipPool, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, err
	}
	if n.IP.To4() == nil {
		return nil, fmt.Errorf("%s: only IPv4 ranges are supported", cidr)
	}
	ones, bits := n.Mask.Size()
	total := uint64(1) << (bits - ones)
	if total < 4 {
		return nil, fmt.Errorf("%s: too small to hold addresses", cidr)
	}
	return &ipPool{
		cidr:  n,
		first: binary.BigEndian.Uint32(n.IP.To4()) + 1,
		size:  uint32(min(total-2, 1<<31)),
		byKey: map[string]uint32{},
		inUse: map[uint32]string{},
	}, nil
}

func toIP(v uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, v)
	return ip
}

// Get returns key's address, allocating one if it has none.
func (p *ipPool) Get(key string) (net.IP, error) { return p.GetShare(key, 0, 1) }

// GetShare is Get for the share-th of shares allocators of one range
// (simulators sharing the nodes): it hands out addresses whose offset is
// share modulo shares first, so that allocators that have not yet seen
// each other's addresses do not give the same one; any free one if its
// share is full.
func (p *ipPool) GetShare(key string, share, shares int) (net.IP, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.byKey[key]; ok {
		return toIP(v), nil
	}
	if uint32(len(p.inUse)) >= p.size {
		return nil, fmt.Errorf("no free address left in %s (%d in use)", p.cidr, len(p.inUse))
	}
	for _, mine := range []bool{true, false} {
		for i := uint32(0); i < p.size; i++ {
			off := (p.next + i) % p.size
			if mine && shares > 1 && int(off%uint32(shares)) != share {
				continue
			}
			v := p.first + off
			if _, taken := p.inUse[v]; !taken {
				p.next = (off + 1) % p.size
				p.byKey[key], p.inUse[v] = v, key
				return toIP(v), nil
			}
		}
	}
	return nil, fmt.Errorf("no free address left in %s", p.cidr)
}

// Occupy records that key already holds ip (found on a running object), so
// it is never handed to another. An address outside the pool is ignored.
func (p *ipPool) Occupy(key string, ip net.IP) {
	ip4 := ip.To4()
	if ip4 == nil || !p.cidr.Contains(ip4) {
		return
	}
	v := binary.BigEndian.Uint32(ip4)
	if v < p.first || v >= p.first+p.size {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.byKey[key]; ok {
		delete(p.inUse, old)
	}
	p.byKey[key], p.inUse[v] = v, key
}

// Release returns key's address to the pool.
func (p *ipPool) Release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.byKey[key]; ok {
		delete(p.byKey, key)
		delete(p.inUse, v)
	}
}

// InUse is how many addresses are handed out.
func (p *ipPool) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.inUse)
}

// nodePools are the address pools of nodes' podCIDRs, by node name, each
// made when first asked for.
type nodePools struct {
	mu     sync.Mutex
	byNode map[string]*ipPool
}

func newNodePools() *nodePools { return &nodePools{byNode: map[string]*ipPool{}} }

// of is the pool of node's podCIDR, which it must have.
func (p *nodePools) of(node *corev1.Node) (*ipPool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pool, ok := p.byNode[node.Name]; ok {
		return pool, nil
	}
	pool, err := newIPPool(node.Spec.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("node %s podCIDR: %w", node.Name, err)
	}
	p.byNode[node.Name] = pool
	return pool, nil
}

// made is the named node's pool if it was made, else nil.
func (p *nodePools) made(name string) *ipPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byNode[name]
}

// forget drops a node's pool (the node is gone).
func (p *nodePools) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byNode, name)
}

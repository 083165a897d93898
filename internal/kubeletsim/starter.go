package kubeletsim

import (
	"encoding/json"
	"fmt"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kubesim/kubesim/internal/stage"
)

// Starter gives pods about to be made, bound to simulated nodes, the
// status the simulator's pod stages give them the moment they appear: a
// clone writes each of its pods once, with that status, where otherwise
// the pod would be created and then patched by the simulator (the second
// write the dearer of the two). It renders the stages exactly as the
// simulator does, with the simulator's helpers: addresses come from each
// node's podCIDR as the simulator hands them out, and a running simulator
// takes addresses it finds on pods as used (podAdded).
type Starter struct {
	lifecycle *stage.Lifecycle
	nodes     map[string]*corev1.Node
	pools     *nodePools
}

// NewStarter renders stages (the cluster's, built-in and user) for pods
// bound to nodes, which must have their addresses and podCIDRs.
func NewStarter(stages []*stage.Stage, nodes []*corev1.Node) *Starter {
	s := &Starter{lifecycle: stage.NewLifecycle("", "Pod", stages), nodes: map[string]*corev1.Node{}, pools: newNodePools()}
	for _, n := range nodes {
		s.nodes[n.Name] = n
	}
	return s
}

// Start sets pod's status to what its stages make of it at once, as the
// simulator would on seeing it: the stage it matches, if due now, and
// those that follow at once (immediateNextStage). It refuses, saying why,
// a pod whose stage is not due at once or does more than patch the
// status (an event, a finalizer, another object): those the simulator
// must carry out itself.
func (s *Starter) Start(pod *corev1.Pod, now time.Time) (err error) {
	defer func() {
		if p := recover(); p != nil { // a bad Stage must not take the caller down
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	for depth := 0; depth <= maxChain; depth++ {
		m, err := toMap(pod)
		if err != nil {
			return err
		}
		st, faults := s.lifecycle.Match(m)
		if len(faults) > 0 {
			return faults[0]
		}
		if st == nil {
			if depth == 0 {
				return fmt.Errorf("no Pod stage matches it")
			}
			return nil
		}
		if _, hi, fault := st.DelayRange(m, now); fault != nil {
			return fmt.Errorf("stage %s: %v", st.Name, fault.Err)
		} else if hi > 0 {
			if depth == 0 {
				return fmt.Errorf("stage %s waits %s", st.Name, hi)
			}
			return nil // the simulator takes it from here
		}
		plan, err := st.Plan(m, stage.Traits{}, podFuncs(pod, s.nodeIP, s.podIP, s.version(pod)))
		if err != nil {
			return fmt.Errorf("stage %s: %w", st.Name, err)
		}
		for _, step := range plan {
			if step.Op != stage.SendPatch || step.Patch.Subresource != "status" || step.Patch.As != "" {
				if depth > 0 {
					return nil // the simulator takes it from here
				}
				return fmt.Errorf("stage %s does more than patch the status (%s)", st.Name, step.Op)
			}
		}
		for _, step := range plan {
			if err := patchStatus(pod, step.Patch); err != nil {
				return fmt.Errorf("stage %s: %w", st.Name, err)
			}
		}
		if !st.Spec.ImmediateNextStage {
			return nil
		}
	}
	return nil
}

// patchStatus applies a status patch to pod; what of it a status write
// may not change, the caller's status strategy resets.
func patchStatus(pod *corev1.Pod, p stage.Patch) error {
	original, err := json.Marshal(pod)
	if err != nil {
		return err
	}
	var patched []byte
	switch p.Type {
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(original, p.Data, &corev1.Pod{})
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(original, p.Data)
	case types.JSONPatchType:
		var ops jsonpatch.Patch
		if ops, err = jsonpatch.DecodePatch(p.Data); err == nil {
			patched, err = ops.Apply(original)
		}
	default:
		return fmt.Errorf("patch type %s", p.Type)
	}
	if err != nil {
		return err
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(patched, out); err != nil {
		return err
	}
	*pod = *out
	return nil
}

func (s *Starter) node(name string) (*corev1.Node, error) {
	n, ok := s.nodes[name]
	if !ok {
		return nil, fmt.Errorf("node %s: not found", name)
	}
	return n, nil
}

func (s *Starter) nodeIP(name string) (string, error) {
	n, err := s.node(name)
	if err != nil {
		return "", err
	}
	ip := internalIP(n)
	if ip == nil {
		return "", fmt.Errorf("node %s has no InternalIP yet", name)
	}
	return ip.String(), nil
}

func (s *Starter) podIP(name string, hostNetwork bool, uid string) (string, error) {
	if hostNetwork {
		return s.nodeIP(name)
	}
	pool, err := s.pool(name)
	if err != nil {
		return "", err
	}
	ip, err := pool.Get(uid)
	if err != nil {
		return "", fmt.Errorf("node %s: pod addresses exhausted: %w", name, err)
	}
	return ip.String(), nil
}

// pool is the address pool of a node's podCIDR.
func (s *Starter) pool(name string) (*ipPool, error) {
	n, err := s.node(name)
	if err != nil {
		return nil, err
	}
	if n.Spec.PodCIDR == "" {
		return nil, fmt.Errorf("node %s has no podCIDR", name)
	}
	return s.pools.of(n)
}

// version is the kubelet version the pod's node reports, as the
// simulator that made the node Ready set it.
func (s *Starter) version(pod *corev1.Pod) func() string {
	return func() string {
		if n, ok := s.nodes[pod.Spec.NodeName]; ok {
			return n.Status.NodeInfo.KubeletVersion
		}
		return ""
	}
}

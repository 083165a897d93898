package ui

import (
	"encoding/json"
	"regexp"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesim/kubesim/internal/clusterclock"
)

// Node is what the map shows of a node.
type Node struct {
	Name          string            `json:"name"`
	Labels        map[string]string `json:"labels,omitempty"`
	Ready         string            `json:"ready"` // True, False or Unknown
	Unschedulable bool              `json:"unschedulable,omitempty"`
	Taints        []string          `json:"taints,omitempty"`
	CPU           int64             `json:"cpu"`    // allocatable, millicores
	Memory        int64             `json:"memory"` // allocatable, bytes
	Pods          int64             `json:"pods"`   // allocatable
	// Devices are those the node's ResourceSlices publish, DevicesUsed
	// those allocated to claims (DRA).
	Devices     int `json:"devices,omitempty"`
	DevicesUsed int `json:"devicesUsed,omitempty"`
	// UsageCPU (millicores) and UsageMemory (bytes) are from the metrics
	// API, when it serves the node; -1 when it does not.
	UsageCPU    int64 `json:"usageCPU"`
	UsageMemory int64 `json:"usageMemory"`
}

// Pod is what the map shows of a pod.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node,omitempty"`
	Owner     string `json:"owner"` // Kind/name, a ReplicaSet's Deployment for it
	Phase     string `json:"phase"`
	CPU       int64  `json:"cpu"`    // requested, millicores
	Memory    int64  `json:"memory"` // requested, bytes
	// Reason is why a Pending pod is not bound: the scheduler's message.
	Reason string `json:"reason,omitempty"`
}

// Event is one occurrence of an event: the timeline's dot.
type Event struct {
	Time      time.Time `json:"time"` // the cluster's clock: its components write it
	Type      string    `json:"type"` // Normal or Warning
	Reason    string    `json:"reason"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	Message   string    `json:"message"`
	Source    string    `json:"source,omitempty"`
}

// Delta is one batch of changes, as the page receives it. Snapshot is
// set on the first, which holds every object and the newest events.
type Delta struct {
	Snapshot  bool     `json:"snapshot,omitempty"`
	Nodes     []Node   `json:"nodes,omitempty"`
	Pods      []Pod    `json:"pods,omitempty"`
	NodesGone []string `json:"nodesGone,omitempty"`
	PodsGone  []string `json:"podsGone,omitempty"` // namespace/name
	Events    []Event  `json:"events,omitempty"`
}

// keptEvents is how many of the newest events the timeline holds.
const keptEvents = 2000

// model follows the cluster's nodes and pods through informers and sends
// each subscriber the changes in batches: a snapshot first, then what
// changed, at most every interval.
type model struct {
	nodes corelisters.NodeLister
	pods  corelisters.PodLister

	mu         sync.Mutex
	dirtyNodes map[string]bool
	dirtyPods  map[string]bool
	subs       map[chan []byte]bool
	events     []Event // the newest keptEvents, oldest first
	newEvents  []Event // since the last batch

	// DRA, when the cluster serves it (devices.go).
	slices       resourcelisters.ResourceSliceLister
	claims       resourcelisters.ResourceClaimLister
	devices      map[string][2]int // node → published, allocated
	devicesDirty bool
	usage        map[string][2]int64 // node → CPU millicores, memory bytes
}

// batchInterval bounds how often the page is sent changes: a burst of
// 10,000 pods becomes a few batches, not 10,000 messages.
const batchInterval = 250 * time.Millisecond

func newModel(factory informers.SharedInformerFactory) *model {
	m := &model{dirtyNodes: map[string]bool{}, dirtyPods: map[string]bool{}, subs: map[chan []byte]bool{}, usage: map[string][2]int64{}}
	nodes := factory.Core().V1().Nodes()
	pods := factory.Core().V1().Pods()
	m.nodes, m.pods = nodes.Lister(), pods.Lister()
	// set is called under the lock: flush swaps the sets for new ones.
	mark := func(set func() map[string]bool) cache.ResourceEventHandler {
		touch := func(obj any) {
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err != nil {
				return
			}
			m.mu.Lock()
			set()[key] = true
			m.mu.Unlock()
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: touch, UpdateFunc: func(_, obj any) { touch(obj) }, DeleteFunc: touch}
	}
	_, _ = nodes.Informer().AddEventHandler(mark(func() map[string]bool { return m.dirtyNodes }))
	_, _ = pods.Informer().AddEventHandler(mark(func() map[string]bool { return m.dirtyPods }))
	// An event's update is its next occurrence (count and time moved on).
	occurred := func(obj any) {
		if ev, ok := obj.(*corev1.Event); ok {
			m.mu.Lock()
			m.newEvents = append(m.newEvents, eventOf(ev))
			m.mu.Unlock()
		}
	}
	_, _ = factory.Core().V1().Events().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: occurred, UpdateFunc: func(_, obj any) { occurred(obj) }})
	return m
}

func eventOf(ev *corev1.Event) Event {
	t := ev.LastTimestamp.Time
	if t.IsZero() {
		t = ev.EventTime.Time
	}
	if t.IsZero() {
		t = ev.CreationTimestamp.Time
	}
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	return Event{Time: t, Type: ev.Type, Reason: ev.Reason, Kind: ev.InvolvedObject.Kind, Namespace: ev.InvolvedObject.Namespace,
		Name: ev.InvolvedObject.Name, Message: ev.Message, Source: source}
}

// run sends the batches until stop is closed.
func (m *model) run(stop <-chan struct{}) {
	tick := time.NewTicker(clusterclock.Stretch(batchInterval))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			m.flush()
		}
	}
}

func (m *model) flush() {
	m.mu.Lock()
	m.countDevices()
	var d Delta
	d.Events, m.newEvents = m.newEvents, nil
	sort.SliceStable(d.Events, func(i, j int) bool { return d.Events[i].Time.Before(d.Events[j].Time) })
	m.events = append(m.events, d.Events...)
	if over := len(m.events) - keptEvents; over > 0 {
		m.events = append([]Event(nil), m.events[over:]...)
	}
	if len(m.subs) == 0 || len(m.dirtyNodes)+len(m.dirtyPods)+len(d.Events) == 0 {
		clear(m.dirtyNodes)
		clear(m.dirtyPods)
		m.mu.Unlock()
		return
	}
	nodeKeys, podKeys := m.dirtyNodes, m.dirtyPods
	m.dirtyNodes, m.dirtyPods = map[string]bool{}, map[string]bool{}
	// Held while the batch is read: the handlers wait a moment, and a
	// node's devices and usage are read as they are.
	defer func() { m.broadcast(d) }()
	defer m.mu.Unlock()
	for key := range nodeKeys {
		if n, err := m.nodes.Get(key); err == nil {
			d.Nodes = append(d.Nodes, m.nodeOf(n))
		} else {
			d.NodesGone = append(d.NodesGone, key)
		}
	}
	for key := range podKeys {
		ns, name, _ := cache.SplitMetaNamespaceKey(key)
		if p, err := m.pods.Pods(ns).Get(name); err == nil {
			d.Pods = append(d.Pods, podOf(p))
		} else {
			d.PodsGone = append(d.PodsGone, key)
		}
	}
}

func (m *model) broadcast(d Delta) {
	msg, err := json.Marshal(d)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for ch := range m.subs {
		select {
		case ch <- msg:
		default:
			// Too slow to keep up: closed, its page reconnects and
			// starts again from a snapshot.
			delete(m.subs, ch)
			close(ch)
		}
	}
}

// subscribe returns the snapshot and the channel of the batches after it.
// It holds the lock throughout: a change made meanwhile waits to be marked,
// and so comes in the first batch after the snapshot.
func (m *model) subscribe() ([]byte, chan []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.countDevices()
	d := Delta{Snapshot: true, Nodes: []Node{}, Pods: []Pod{}, Events: m.events}
	nodes, err := m.nodes.List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	for _, n := range nodes {
		d.Nodes = append(d.Nodes, m.nodeOf(n))
	}
	sort.Slice(d.Nodes, func(i, j int) bool { return d.Nodes[i].Name < d.Nodes[j].Name })
	pods, err := m.pods.List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	for _, p := range pods {
		d.Pods = append(d.Pods, podOf(p))
	}
	msg, err := json.Marshal(d)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan []byte, 64)
	m.subs[ch] = true
	return msg, ch, nil
}

func (m *model) unsubscribe(ch chan []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.subs[ch] {
		delete(m.subs, ch)
		close(ch)
	}
}

// nodeOf is the node with its devices and usage (m.mu held).
func (m *model) nodeOf(n *corev1.Node) Node {
	out := nodeOf(n)
	out.Devices, out.DevicesUsed = m.devices[n.Name][0], m.devices[n.Name][1]
	if u, ok := m.usage[n.Name]; ok {
		out.UsageCPU, out.UsageMemory = u[0], u[1]
	}
	return out
}

func nodeOf(n *corev1.Node) Node {
	out := Node{UsageCPU: -1, UsageMemory: -1, Name: n.Name, Labels: n.Labels, Ready: string(corev1.ConditionUnknown), Unschedulable: n.Spec.Unschedulable,
		CPU: n.Status.Allocatable.Cpu().MilliValue(), Memory: n.Status.Allocatable.Memory().Value(), Pods: n.Status.Allocatable.Pods().Value()}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = string(c.Status)
		}
	}
	for _, t := range n.Spec.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out.Taints = append(out.Taints, s+":"+string(t.Effect))
	}
	return out
}

// replicaSetHash is the pod-template-hash suffix of a Deployment's
// ReplicaSet name.
var replicaSetHash = regexp.MustCompile(`-[a-z0-9]{6,10}$`)

func podOf(p *corev1.Pod) Pod {
	out := Pod{Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, Phase: string(p.Status.Phase), Owner: "Pod/" + p.Name}
	if ref := metav1.GetControllerOf(p); ref != nil {
		name := ref.Name
		kind := ref.Kind
		if kind == "ReplicaSet" && p.Labels["pod-template-hash"] != "" {
			kind, name = "Deployment", replicaSetHash.ReplaceAllString(name, "")
		}
		out.Owner = kind + "/" + name
	}
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	out.CPU, out.Memory = requests.Cpu().MilliValue(), requests.Memory().Value()
	if p.Spec.NodeName == "" {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				out.Reason = c.Message
				if out.Reason == "" {
					out.Reason = c.Reason
				}
			}
		}
	}
	return out
}

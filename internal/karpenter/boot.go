package karpenter

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kwokv1alpha1 "sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// NodeClaimAnnotation on a node names the NodeClaim it was launched for.
const NodeClaimAnnotation = "kubesim.io/nodeclaim"

// ReadyAtAnnotation on a node is the time the simulated kubelet reports it
// Ready (the built-in node-initialize Stage waits for it).
const ReadyAtAnnotation = "kubesim.io/ready-at"

// A node of a KWOKNodeClass without a nodeRegistrationDelay boots in a
// time drawn between these: what a cloud instance takes from launch to a
// Ready kubelet, so "how long until my pods run" has a real answer.
const (
	minBoot = 30 * time.Second
	maxBoot = 60 * time.Second
)

// providerPrefix begins the providerID of the KWOK provider's nodes.
const providerPrefix = "kwok://"

// nodeClaimKey is the context key of the NodeClaim being launched.
type nodeClaimKey struct{}

// launcher is the KWOK provider, made idempotent as a real cloud's is.
// Karpenter records a NodeClaim's providerID after Create returns; killed
// in between, it launches the NodeClaim again on restart, and upstream's
// provider would make a second node, which nothing ever removes (a cloud
// provider collects such leaked instances; KWOK's has no collector).
type launcher struct {
	*kwok.CloudProvider
	kube client.Client
}

// Create returns the NodeClaim's node if one was already made for it.
func (l launcher) Create(ctx context.Context, nc *karpenterv1.NodeClaim) (*karpenterv1.NodeClaim, error) {
	nodes := &corev1.NodeList{}
	if err := l.kube.List(ctx, nodes); err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		if n.Annotations[NodeClaimAnnotation] == nc.Name && strings.HasPrefix(n.Spec.ProviderID, providerPrefix) {
			return l.Get(ctx, n.Spec.ProviderID)
		}
	}
	return l.CloudProvider.Create(context.WithValue(ctx, nodeClaimKey{}, nc.Name), nc)
}

// bootClient is the client the KWOK provider is given. Upstream's provider
// sleeps nodeRegistrationDelay in a goroutine before it creates the Node,
// so a restart of the process in between loses the instance for good. Here
// the provider creates the Node at once, as a kubelet registers it (with
// the not-ready taint), carrying the time it is to be Ready; the kubelet
// simulator makes it Ready then. The boot survives a restart of either.
type bootClient struct {
	client.Client
}

// Get hides the node class's delay from the provider, which would sleep it.
func (c bootClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if nc, ok := obj.(*kwokv1alpha1.KWOKNodeClass); ok && err == nil {
		nc.Spec.NodeRegistrationDelay.Duration = 0
	}
	return err
}

// Create stamps the provider's nodes with their boot time and their
// NodeClaim (launcher.Create's).
func (c bootClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if n, ok := obj.(*corev1.Node); ok && strings.HasPrefix(n.Spec.ProviderID, providerPrefix) {
		c.registering(ctx, n, time.Now())
		if name, ok := ctx.Value(nodeClaimKey{}).(string); ok {
			n.Annotations[NodeClaimAnnotation] = name
		}
	}
	return c.Client.Create(ctx, obj, opts...)
}

// registering makes n the Node a booting instance's kubelet registers:
// the not-ready taint, Ready False (as a kubelet reports it until its
// runtime and network are up; without a Ready condition the node
// lifecycle controller would lift the taint and pods land on a node still
// booting), and when it will be Ready.
func (c bootClient) registering(ctx context.Context, n *corev1.Node, now time.Time) {
	readyAt := now.Add(c.bootTime(ctx, n)).UTC().Format(time.RFC3339Nano)
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[ReadyAtAnnotation] = readyAt
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	since := metav1.NewTime(now)
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "booting: Ready at " + readyAt, LastHeartbeatTime: since, LastTransitionTime: since,
	})
}

// bootTime is the node class's nodeRegistrationDelay, or a realistic boot
// time if it sets none.
func (c bootClient) bootTime(ctx context.Context, n *corev1.Node) time.Duration {
	if d := c.registrationDelay(ctx, n.Labels[karpenterv1.NodePoolLabelKey]); d > 0 {
		return d
	}
	return minBoot + rand.N(maxBoot-minBoot)
}

// registrationDelay is the delay of the node class the NodePool names; 0
// if either cannot be read (the default boot time then applies).
func (c bootClient) registrationDelay(ctx context.Context, nodePool string) time.Duration {
	np := &karpenterv1.NodePool{}
	if nodePool == "" || c.Client.Get(ctx, types.NamespacedName{Name: nodePool}, np) != nil || np.Spec.Template.Spec.NodeClassRef == nil {
		return 0
	}
	nc := &kwokv1alpha1.KWOKNodeClass{}
	if c.Client.Get(ctx, types.NamespacedName{Name: np.Spec.Template.Spec.NodeClassRef.Name}, nc) != nil {
		return 0
	}
	return nc.Spec.NodeRegistrationDelay.Duration
}

package kubeletsim

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// claimGate holds back the start of a pod whose ResourceClaims are not all
// reserved for it, as the kubelet refuses to prepare its resources: the
// pod stays Pending, with one FailedPrepareDynamicResources Warning, until
// the claims are (the scheduler reserves them before it binds; a pod made
// with spec.nodeName set waits here for good). Pods without claims pass
// without a look.
type claimGate struct {
	lister  resourcelisters.ResourceClaimLister
	factory informers.SharedInformerFactory

	mu     sync.Mutex
	warned map[types.UID]string // the pod's last Warning, said once
}

// newClaimGate follows the cluster's ResourceClaims, or returns nil where
// they cannot be read (a cluster without DRA, or a role without them):
// there pods start as they did before DRA.
func newClaimGate(ctx context.Context, client kubernetes.Interface) *claimGate {
	if _, err := client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		klog.InfoS("ResourceClaims cannot be read: pods with claims start without waiting for them", "err", err)
		return nil
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	claims := factory.Resource().V1().ResourceClaims()
	if err := claims.Informer().SetTransform(dropManagedFields); err != nil {
		return nil
	}
	return &claimGate{lister: claims.Lister(), factory: factory, warned: map[types.UID]string{}}
}

// start runs the informer, giving the pods a claim is reserved for (or
// was, before a change) their turn again on every change of it.
func (g *claimGate) start(ctx context.Context, enqueue func(key string)) error {
	informer := g.factory.Resource().V1().ResourceClaims().Informer()
	reserved := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		claim, ok := obj.(*resourcev1.ResourceClaim)
		if !ok {
			return
		}
		for _, r := range claim.Status.ReservedFor {
			if r.Resource == "pods" && r.APIGroup == "" {
				enqueue(claim.Namespace + "/" + r.Name)
			}
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    reserved,
		UpdateFunc: func(_, obj any) { reserved(obj) },
	}); err != nil {
		return err
	}
	g.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return ctx.Err()
	}
	return nil
}

// held says why pod may not start yet; "" if it may (or has started, or
// is going: the gate is for starting only).
func (g *claimGate) held(pod *corev1.Pod) string {
	if g == nil || len(pod.Spec.ResourceClaims) == 0 || pod.DeletionTimestamp != nil ||
		pod.Status.Phase != corev1.PodPending && pod.Status.Phase != "" {
		return ""
	}
	for _, rc := range pod.Spec.ResourceClaims {
		name, why := claimName(pod, rc)
		if why != "" {
			return why
		}
		if name == "" {
			continue // the template said no claim is needed
		}
		claim, err := g.lister.ResourceClaims(pod.Namespace).Get(name)
		if err != nil {
			return fmt.Sprintf("ResourceClaim %s (pod claim %s): %v", name, rc.Name, err)
		}
		if !reservedFor(claim, pod) {
			return fmt.Sprintf("ResourceClaim %s (pod claim %s) is not reserved for the pod; the kubelet prepares only claims reserved for the pod (the scheduler reserves them; a pod bound with spec.nodeName bypasses it)", name, rc.Name)
		}
	}
	return ""
}

// warn reports why pod is held, once per reason.
func (g *claimGate) warn(pod *corev1.Pod, why string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.warned[pod.UID] == why {
		return false
	}
	g.warned[pod.UID] = why
	return true
}

func (g *claimGate) forget(uid types.UID) {
	if g == nil {
		return
	}
	g.mu.Lock()
	delete(g.warned, uid)
	g.mu.Unlock()
}

// claimName is the name of the claim rc stands for: given, or made from a
// template by the controller-manager, which records it in the pod's status
// ("" with no reason when the template made none).
func claimName(pod *corev1.Pod, rc corev1.PodResourceClaim) (name, why string) {
	if rc.ResourceClaimName != nil {
		return *rc.ResourceClaimName, ""
	}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == rc.Name {
			if s.ResourceClaimName == nil {
				return "", ""
			}
			return *s.ResourceClaimName, ""
		}
	}
	return "", fmt.Sprintf("the claim for pod claim %s has not been made from its template yet", rc.Name)
}

func reservedFor(claim *resourcev1.ResourceClaim, pod *corev1.Pod) bool {
	for _, r := range claim.Status.ReservedFor {
		if r.Resource == "pods" && r.APIGroup == "" && r.UID == pod.UID {
			return true
		}
	}
	return false
}

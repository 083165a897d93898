package dpdb

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// The eviction webhook, as registered with the API server.
const (
	WebhookName = "eviction.dpdb.policy.kubesim.io"
	// DeleteWebhookName checks pod deletions too, for pods that carry
	// GuardDeleteLabel=true.
	DeleteWebhookName = "delete.dpdb.policy.kubesim.io"
	GuardDeleteLabel  = "policy.kubesim.io/guard-delete"
	WebhookPath       = "/evict"
	// holdTimeout bounds how long an admitted eviction keeps the lock
	// waiting for its child PDB to count the pod out.
	holdTimeout = 5 * time.Second
)

// Webhooks are the controller's webhooks as the API server should call
// them, through cc. Both fail closed: an eviction that cannot be checked
// is refused. deploy/dpdb/webhook.yaml carries the same.
func Webhooks(cc admissionregistrationv1.WebhookClientConfig) []admissionregistrationv1.ValidatingWebhook {
	webhook := func(name string, op admissionregistrationv1.OperationType, resource string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{op},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}
	}
	evict := webhook(WebhookName, admissionregistrationv1.Create, "pods/eviction")
	// Deleting a pod skips PDBs; pods labelled for it opt in.
	del := webhook(DeleteWebhookName, admissionregistrationv1.Delete, "pods")
	del.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{GuardDeleteLabel: "true"}}
	return []admissionregistrationv1.ValidatingWebhook{evict, del}
}

// ReadyPath answers 200 once the API server can trust the webhook (its
// CA published, when the controller made its own certificate).
const ReadyPath = "/readyz"

// serveWebhook serves the eviction webhook on WebhookAddress until ctx
// ends.
func (c *Controller) serveWebhook(ctx context.Context) error {
	cert, caPEM, err := c.opts.servingCert()
	if err != nil {
		return err
	}
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc(WebhookPath, c.handleEviction)
	mux.HandleFunc(ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "the webhook's CA is not published yet", http.StatusServiceUnavailable)
		}
	})
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
	}
	l, err := net.Listen("tcp", net.JoinHostPort(c.opts.WebhookAddress, strconv.Itoa(c.opts.WebhookPort)))
	if err != nil {
		return fmt.Errorf("--webhook-address, --webhook-port: %w", err)
	}
	// Listening first: the API server calls as soon as it trusts the CA.
	if caPEM != nil {
		go c.publishCA(ctx, caPEM, &ready)
	} else {
		ready.Store(true)
	}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (c *Controller) handleEviction(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	review := &admissionv1.AdmissionReview{}
	if err == nil {
		err = json.Unmarshal(body, review)
	}
	if err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	req := review.Request
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	evicting := req.SubResource == "eviction" && req.Operation == admissionv1.Create
	deleting := req.SubResource == "" && req.Operation == admissionv1.Delete && req.Kind.Kind == "Pod"
	if evicting || deleting {
		msg := c.waitCaughtUp(r.Context())
		if msg == "" {
			msg = c.admitEviction(r.Context(), req.Namespace, req.Name, req.DryRun != nil && *req.DryRun)
		}
		if msg != "" {
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests,
				Reason: metav1.StatusReasonTooManyRequests, Message: msg}
		}
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// caughtUpWait bounds how long an admission waits for a starting
// controller, well inside the webhook's 10s timeout.
const caughtUpWait = 5 * time.Second

// waitCaughtUp waits until the controller knows the DPDBs and the
// clusters; it returns why it refuses if it does not in time.
func (c *Controller) waitCaughtUp(ctx context.Context) string {
	select {
	case <-c.caughtUp:
		return ""
	case <-ctx.Done():
	case <-time.After(caughtUpWait):
	}
	return "the DistributedPodDisruptionBudget controller is still starting; try again"
}

// admitEviction decides an eviction of a pod that DPDBs cover: under the
// federation's lock, with the members' live PDB status. It returns why it
// refuses, or "" to admit. An admitted eviction keeps the lock until the
// pod's child PDB counts it out, so no neighbour's check can miss it.
func (c *Controller) admitEviction(ctx context.Context, namespace, name string, dryRun bool) string {
	pod, err := c.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "" // the API server answers for a pod that is not there
	}
	if !podHealthy(pod) {
		return "" // an unhealthy pod spends no budget
	}
	dpdbs := c.covering(pod)
	if len(dpdbs) == 0 {
		return ""
	}
	// The lock: this cluster's, and every cluster the DPDBs federate.
	targets := []lockTarget{{cluster: c.opts.ClusterName, client: c.client}}
	seen := map[string]bool{c.opts.ClusterName: true}
	for _, d := range dpdbs {
		for _, m := range c.members(d) {
			if m.Cluster == "" || seen[m.Cluster] {
				continue
			}
			seen[m.Cluster] = true
			client, msg := c.remotes.client(m.Cluster)
			if client == nil {
				return fmt.Sprintf("DistributedPodDisruptionBudget %s/%s: member %s: %s", d.Namespace, d.Name, m, msg)
			}
			targets = append(targets, lockTarget{cluster: m.Cluster, client: client})
		}
	}
	start := time.Now()
	var lock *federationLock
	if !dryRun {
		holder := c.opts.ClusterName + "/" + namespace + "/" + name + "/" + string(uuid.NewUUID())
		if lock, err = acquireAll(ctx, c.opts.Namespace, holder, targets); err != nil {
			return "the federation's eviction lock is busy: " + err.Error()
		}
	}
	var ownBefore []int32
	for _, d := range dpdbs {
		healthy, msg := c.checkLive(ctx, d)
		if msg != "" {
			if lock != nil {
				lock.release(context.WithoutCancel(ctx))
			}
			return msg
		}
		ownBefore = append(ownBefore, healthy)
	}
	if lock != nil {
		klog.InfoS("eviction admitted", "pod", namespace+"/"+name, "lockAndCheck", time.Since(start))
		go c.hold(context.WithoutCancel(ctx), lock, dpdbs, ownBefore, pod)
	}
	return ""
}

// checkLive reads the DPDB's child and members now (not from the watch)
// and returns the child's healthy pods, or why the eviction must wait.
func (c *Controller) checkLive(ctx context.Context, d *policyv1alpha1.DistributedPodDisruptionBudget) (int32, string) {
	what := fmt.Sprintf("DistributedPodDisruptionBudget %s/%s", d.Namespace, d.Name)
	child, err := c.client.PolicyV1().PodDisruptionBudgets(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Sprintf("%s: child PDB: %v", what, err)
	}
	own, msg := observe(child)
	if !own.Sure {
		return 0, fmt.Sprintf("%s: child PDB %s", what, msg)
	}
	var obs []Observation
	var unsure []string
	for _, m := range c.members(d) {
		client := kubernetes.Interface(c.client)
		if m.Cluster != "" {
			var why string
			if client, why = c.remotes.client(m.Cluster); client == nil {
				unsure = append(unsure, m.String()+": "+why)
				obs = append(obs, Observation{})
				continue
			}
		}
		o, why := readLive(ctx, client, m)
		if !o.Sure {
			unsure = append(unsure, m.String()+": "+why)
		}
		obs = append(obs, o)
	}
	if len(unsure) > 0 {
		return 0, fmt.Sprintf("%s: refusing while a member cannot be read: %s", what, strings.Join(unsure, "; "))
	}
	b, err := Compute(d.Spec, own, obs)
	if err != nil {
		return 0, fmt.Sprintf("%s: %v", what, err)
	}
	if b.Allowed(own.Healthy) < 1 {
		return 0, fmt.Sprintf("%s: the federation allows no disruption now (%d healthy of %d required)",
			what, own.Healthy+b.MembersHealthy, b.Required)
	}
	return own.Healthy, ""
}

func readLive(ctx context.Context, client kubernetes.Interface, m member) (Observation, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	pdb, err := client.PolicyV1().PodDisruptionBudgets(m.Namespace).Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return Observation{}, err.Error()
	}
	return observe(pdb)
}

// hold keeps the lock until every DPDB's child shows the eviction (fewer
// healthy pods than before, or the pod gone or terminating), or
// holdTimeout passes (the API server may have refused the eviction after
// all), then releases it.
func (c *Controller) hold(ctx context.Context, lock *federationLock, dpdbs []*policyv1alpha1.DistributedPodDisruptionBudget, before []int32, pod *corev1.Pod) {
	defer lock.release(ctx)
	deadline := time.Now().Add(holdTimeout)
	for time.Now().Before(deadline) {
		shown := true
		for i, d := range dpdbs {
			child, err := c.client.PolicyV1().PodDisruptionBudgets(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil || !countedOut(child, before[i]) {
				shown = false
				break
			}
		}
		if shown {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	klog.InfoS("released the eviction lock on timeout", "pod", pod.Namespace+"/"+pod.Name)
}

// countedOut reports whether the child has counted one pod fewer healthy.
func countedOut(child *policyv1.PodDisruptionBudget, before int32) bool {
	return child.Status.CurrentHealthy < before
}

// covering lists the DPDBs whose selector matches the pod.
func (c *Controller) covering(pod *corev1.Pod) []*policyv1alpha1.DistributedPodDisruptionBudget {
	objs, _ := c.dpdbs.GetIndexer().ByIndex(cache.NamespaceIndex, pod.Namespace)
	var out []*policyv1alpha1.DistributedPodDisruptionBudget
	for _, obj := range objs {
		d, err := toDPDB(obj)
		if err != nil || d.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *policyv1alpha1.DistributedPodDisruptionBudget) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func podHealthy(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

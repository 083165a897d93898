package descheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
)

// Eviction is one eviction the descheduler asked for, and what came of it.
type Eviction struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Node      string `json:"node"`
	Profile   string `json:"profile"`
	Plugin    string `json:"plugin"`
	Reason    string `json:"reason,omitempty"`
	Result    Result `json:"result"`
	// Message is why the API server refused the eviction, such as a
	// PodDisruptionBudget it would violate.
	Message string `json:"message,omitempty"`
}

// Result is what came of an eviction.
type Result string

// The results: a dry run only says what would have happened.
const (
	Evicted        Result = "Evicted"
	Refused        Result = "Refused"
	WouldEvict     Result = "WouldEvict"
	WouldBeRefused Result = "WouldBeRefused"
)

// pdbRefusal is the API server's own words for a refusal by a budget.
const pdbRefusal = "Cannot evict pod as it would violate the pod's disruption budget."

var (
	evictionPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction$`)
	eventPath    = regexp.MustCompile(`^/apis?/(events\.k8s\.io/)?v1/namespaces/[^/]+/events(/[^/]+)?$`)
)

// tap sits between the descheduler and the API server. It records every
// eviction request and its answer, so each is reported with the pod's node
// and the plugin that asked. In a dry run it sends evictions as dryRun=All —
// the API server then checks PodDisruptionBudgets without evicting — and
// keeps the count of disruptions each budget has left across the cycle,
// which the server cannot (a dry run decrements nothing); the Events the
// descheduler records are answered here and never reach the server.
type tap struct {
	next   http.RoundTripper
	reader kubernetes.Interface // untapped, to read pods and budgets
	dryRun bool
	// ownEvents: the descheduler's Events are answered here, and the tap
	// writes one per eviction itself, at once. A single cycle needs it:
	// upstream's recorder is shut down, its Events unsent, as the cycle ends.
	ownEvents bool
	report    func(Eviction)

	mu         sync.Mutex
	evictions  []Eviction
	approved   map[string]int32 // budget → dry-run evictions it allowed
	podWatches []*podWatch      // dry run: the descheduler's pod watches
	// leaving: pods a real run evicted whose watch event showing them
	// terminating has not yet reached the descheduler (see awaitLeaving).
	leaving map[types.UID]chan struct{}
}

func (t *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	if podWatchPath.MatchString(req.URL.Path) && req.URL.Query().Get("watch") == "true" {
		return t.watchPods(req)
	}
	m := evictionPath.FindStringSubmatch(req.URL.Path)
	if req.Method != http.MethodPost || m == nil {
		if (t.dryRun || t.ownEvents) && req.Method != http.MethodGet && eventPath.MatchString(req.URL.Path) {
			return echo(req)
		}
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	ev := Eviction{Namespace: m[1], Pod: m[2]}
	if obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
		if e, ok := obj.(*policyv1.Eviction); ok {
			ev.Profile, ev.Plugin, ev.Reason = parseTrigger(e.Annotations["reason"])
		}
	}
	ctx := req.Context()
	pod, err := t.reader.CoreV1().Pods(ev.Namespace).Get(ctx, ev.Pod, metav1.GetOptions{})
	if err != nil {
		pod = nil // client-go hands back an empty pod with errors
	} else {
		ev.Node = pod.Spec.NodeName
	}
	var budgets []string
	if t.dryRun {
		if t.evictedBefore(ev) {
			// Already on its way out in this (dry) cycle: as if gone.
			return statusResponse(req, apierrors.NewNotFound(corev1.Resource("pods"), ev.Pod)), nil
		}
		if pod != nil {
			var blocked bool
			if budgets, blocked = t.budgets(ctx, pod.Namespace, pod.Labels); blocked {
				ev.Result, ev.Message = WouldBeRefused, pdbRefusal
				t.record(ev)
				return statusResponse(req, apierrors.NewTooManyRequests(pdbRefusal, 0)), nil
			}
		}
		q := req.URL.Query()
		q.Set("dryRun", metav1.DryRunAll)
		req.URL.RawQuery = q.Encode()
	}
	var seen <-chan struct{}
	if !t.dryRun && pod != nil {
		seen = t.expectLeaving(pod.UID)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := t.next.RoundTrip(req)
	ok := err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300
	if seen != nil && !ok {
		t.stopExpecting(pod.UID)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case ok && t.dryRun:
		ev.Result = WouldEvict
		t.approve(budgets)
		if pod != nil {
			t.vanish(pod)
		}
	case ok:
		ev.Result = Evicted
	default:
		ev.Result = Refused
		if t.dryRun {
			ev.Result = WouldBeRefused
		}
		ev.Message = statusMessage(resp)
	}
	t.record(ev)
	if t.ownEvents && pod != nil {
		t.writeEvent(ctx, pod, ev)
	}
	if ok && seen != nil {
		t.awaitLeaving(pod.UID, seen) // reported first: the wait is not the eviction's
	}
	return resp, nil
}

func (t *tap) evictedBefore(ev Eviction) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.evictions {
		if e.Namespace == ev.Namespace && e.Pod == ev.Pod && e.Result == WouldEvict {
			return true
		}
	}
	return false
}

// writeEvent records an eviction, or its refusal, as an Event on the pod.
func (t *tap) writeEvent(ctx context.Context, pod *corev1.Pod, ev Eviction) {
	typ, reason := corev1.EventTypeNormal, "Descheduled"
	message := fmt.Sprintf("pod eviction from %s node by sigs.k8s.io/descheduler (%s)", ev.Node, ev.Plugin)
	if ev.Result == Refused {
		typ, reason = corev1.EventTypeWarning, "EvictionFailed"
		message += " failed: " + ev.Message
	}
	now := metav1.Now()
	event := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			ResourceVersion: pod.ResourceVersion,
		},
		Type: typ, Reason: reason, Message: message,
		Source:         corev1.EventSource{Component: "sigs.k8s.io/descheduler"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := t.reader.CoreV1().Events(pod.Namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		klog.ErrorS(err, "recording eviction event", "pod", klog.KObj(pod))
	}
}

func (t *tap) record(ev Eviction) {
	t.mu.Lock()
	t.evictions = append(t.evictions, ev)
	t.mu.Unlock()
	if t.report != nil {
		t.report(ev)
	}
}

// budgets names the PodDisruptionBudgets over a pod, and reports whether
// one of them has no disruption left once this cycle's are counted.
func (t *tap) budgets(ctx context.Context, namespace string, podLabels map[string]string) ([]string, bool) {
	pdbs, err := t.reader.PolicyV1().PodDisruptionBudgets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false // the server's own dry-run check still applies
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var names []string
	blocked := false
	for _, pdb := range pdbs.Items {
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || selector.Empty() || !selector.Matches(labels.Set(podLabels)) {
			continue
		}
		key := pdb.Namespace + "/" + pdb.Name
		names = append(names, key)
		if pdb.Status.DisruptionsAllowed-t.approved[key] <= 0 {
			blocked = true
		}
	}
	return names, blocked
}

func (t *tap) approve(budgets []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.approved == nil {
		t.approved = map[string]int32{}
	}
	for _, b := range budgets {
		t.approved[b]++
	}
}

// parseTrigger reads the descheduler's "triggered by PROFILE/PLUGIN: REASON".
func parseTrigger(s string) (profile, plugin, reason string) {
	s = strings.TrimPrefix(s, "triggered by ")
	who, reason, _ := strings.Cut(s, ": ")
	profile, plugin, _ = strings.Cut(who, "/")
	return profile, plugin, strings.TrimSpace(reason)
}

func statusMessage(resp *http.Response) string {
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return resp.Status
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if status, ok := obj.(*metav1.Status); err == nil && ok {
		return status.Message
	}
	return resp.Status
}

// echo answers a write with its own body, as if the server had taken it.
func echo(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
	}
	status := http.StatusOK
	if req.Method == http.MethodPost {
		status = http.StatusCreated
	}
	return response(req, status, req.Header.Get("Content-Type"), body), nil
}

// statusResponse answers as the API server does when it says no.
func statusResponse(req *http.Request, err *apierrors.StatusError) *http.Response {
	status := err.Status()
	status.Kind, status.APIVersion = "Status", "v1"
	body, _ := json.Marshal(status)
	return response(req, int(status.Code), "application/json", body)
}

func response(req *http.Request, status int, contentType string, body []byte) *http.Response {
	return &http.Response{
		StatusCode: status,
		Status:     http.StatusText(status),
		Header:     http.Header{"Content-Type": []string{contentType}},
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    req,
		ProtoMajor: 1, ProtoMinor: 1,
	}
}

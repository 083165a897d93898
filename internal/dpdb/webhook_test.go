package dpdb

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// review posts an AdmissionReview of req to the webhook's handler, under
// ctx.
func review(ctx context.Context, t *testing.T, wh *webhook, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	wh.handleEviction(rec, httptest.NewRequestWithContext(ctx, http.MethodPost, WebhookPath, bytes.NewReader(body)))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var got admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Request != nil || got.Response == nil || got.Response.UID != req.UID || got.APIVersion != "admission.k8s.io/v1" {
		t.Fatalf("review answered as %+v, want the response alone, for UID %s", got, req.UID)
	}
	return got.Response
}

func evictionOf(name string) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{UID: types.UID("uid-" + name), Namespace: shop, Name: name,
		Operation: admissionv1.Create, SubResource: "eviction", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Eviction"}}
}

// A refusal is a 429 the API server hands back to whoever evicts, with
// the reason as its message; an admission carries no status.
func TestHandleEvictionAnswers(t *testing.T) {
	f := admissionFixture(t, 6, redCounted())
	f.waitReached("red")

	resp := review(f.ctx, t, f.c.webhook, evictionOf("web-0"))
	want := "DistributedPodDisruptionBudget shop/web: the federation allows no disruption now (6 healthy of 6 required)"
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests ||
		resp.Result.Reason != metav1.StatusReasonTooManyRequests || resp.Result.Status != metav1.StatusFailure || resp.Result.Message != want {
		t.Errorf("over budget: %+v (result %+v), want a 429 with %q", resp, resp.Result, want)
	}

	// Deleting a pod that opts in is checked as an eviction.
	del := &admissionv1.AdmissionRequest{UID: "uid-delete", Namespace: shop, Name: "web-0",
		Operation: admissionv1.Delete, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}}
	if resp := review(f.ctx, t, f.c.webhook, del); resp.Allowed || resp.Result == nil || resp.Result.Message != want {
		t.Errorf("guarded delete over budget: %+v, want refused with %q", resp, want)
	}

	if resp := review(f.ctx, t, f.c.webhook, evictionOf("db-0")); !resp.Allowed || resp.Result != nil {
		t.Errorf("uncovered pod: %+v, want allowed with no status", resp)
	}
}

// Until the controller has caught up, evictions are refused (here at
// once: the request is gone) while other requests pass unchecked; a body
// that is no review is a 400.
func TestHandleEvictionWhileStarting(t *testing.T) {
	wh := &webhook{caughtUp: make(chan struct{})}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	resp := review(gone, t, wh, evictionOf("web-0"))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests ||
		resp.Result.Message != "the DistributedPodDisruptionBudget controller is still starting; try again" {
		t.Errorf("eviction while starting: %+v, want refused as starting", resp)
	}

	update := &admissionv1.AdmissionRequest{UID: "uid-update", Namespace: shop, Name: "web-0",
		Operation: admissionv1.Update, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}}
	if resp := review(t.Context(), t, wh, update); !resp.Allowed || resp.Result != nil {
		t.Errorf("a pod update: %+v, want allowed unchecked", resp)
	}

	rec := httptest.NewRecorder()
	wh.handleEviction(rec, httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(`{"kind":"Pod"}`)))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "not an AdmissionReview") {
		t.Errorf("a body with no request: HTTP %d %q, want 400", rec.Code, rec.Body)
	}
}

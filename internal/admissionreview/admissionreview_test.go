package admissionreview

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServe(t *testing.T) {
	refuse := func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "no " + req.Name}}
	}
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","name":"x"}}`
	w := httptest.NewRecorder()
	Serve(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)), refuse)
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &review); err != nil || review.Request != nil || review.Response == nil ||
		review.Response.UID != "u-1" || review.Response.Allowed || review.Response.Result.Message != "no x" {
		t.Errorf("answer %s (%v)", w.Body, err)
	}
	w = httptest.NewRecorder()
	Serve(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")), refuse)
	if w.Code != http.StatusBadRequest {
		t.Errorf("a body with no request: %d", w.Code)
	}
}

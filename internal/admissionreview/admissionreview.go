// Package admissionreview is the envelope of kubesim's validating
// webhooks: it reads the API server's AdmissionReview and writes the
// answer, so that each webhook is only its decision.
package admissionreview

import (
	"encoding/json"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
)

// maxReview bounds a review's body: a Stage or an eviction is far smaller.
const maxReview = 4 << 20

// Serve answers one review: decide is given its request and returns the
// response, whose UID Serve fills in. A body that is no AdmissionReview
// gets 400.
func Serve(w http.ResponseWriter, r *http.Request, decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReview))
	review := &admissionv1.AdmissionReview{}
	if err == nil {
		err = json.Unmarshal(body, review)
	}
	if err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := decide(review.Request)
	resp.UID = review.Request.UID
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

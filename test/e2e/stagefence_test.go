//go:build e2e

package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRunawayTemplateIsFenced: a Stage whose template would loop for
// hours (100,000 × 100,000 iterations) fails its render at the fence: a
// StageFailed Warning Event on its pod, while other pods go Running; once
// the Stage is deleted its pod moves on and can be deleted, nothing of the
// render left running.
func TestRunawayTemplateIsFenced(t *testing.T) {
	e := newEnv(t)
	e.createCluster("fence", "--nodes", "1")
	client := e.client()
	e.apply(labelledPendingStage("runaway",
		`phase: Running{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`))
	waitStageAccepted(t, e, "runaway")
	createPod(t, client, labelledPod("runaway-1", map[string]string{"runaway": "true"}))
	waitEvent(t, client, "default", "runaway-1", "StageFailed", "ran past its fence")
	createPod(t, client, testPod("fine-1"))
	waitPhase(t, client, "fine-1", corev1.PodRunning)
	if p := getPod(t, client, "runaway-1"); p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod of the runaway stage is %s, want Pending", p.Status.Phase)
	}
	e.kubectl("delete", "stage", "runaway")
	waitPhase(t, client, "runaway-1", corev1.PodRunning)
	if err := client.CoreV1().Pods("default").Delete(context.Background(), "runaway-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client, "runaway-1")
}

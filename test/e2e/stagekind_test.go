//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// TestStageForAnUnservedKind: a Stage for a kind no CRD defines gets a
// StageKindNotServed Warning Event, once for its generation however often
// the simulator looks again; a CRD for the kind applied afterwards is
// picked up and the Stage acts on its objects.
func TestStageForAnUnservedKind(t *testing.T) {
	e := newEnv(t)
	e.createCluster("stagekind", "--nodes", "1")
	client := e.client()
	e.apply(readyStage("no-such-thing", "NoSuchThing", ""))
	waitEvent(t, client, "", "no-such-thing", "StageKindNotServed", "example.com")

	e.apply(crdManifest("NoSuchThing", "nosuchthings"))
	e.applyServed("apiVersion: example.com/v1\nkind: NoSuchThing\nmetadata: {name: t1, namespace: default}\n")
	// Picked up at the simulator's next look, which backs off (up to 2
	// minutes), and once the supervisor has granted it the kind.
	eventually(t, 4*time.Minute, "the Stage acting on the NoSuchThing", func() error {
		if out := e.kubectl("get", "nosuchthing", "t1", "-o", "jsonpath={.status.ready}").stdout; out != "true" {
			return fmt.Errorf("status.ready %q", out)
		}
		return nil
	})
	events, err := client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": "no-such-thing", "reason": "StageKindNotServed"}.String()})
	if err != nil {
		t.Fatal(err)
	}
	count := int32(0)
	for _, ev := range events.Items {
		count += max(ev.Count, 1)
	}
	if count != 1 {
		t.Errorf("%d StageKindNotServed events on the Stage, want 1 (once per generation)", count)
	}
}

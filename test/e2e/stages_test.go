//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestUserStages: Stages applied with kubectl shape lifecycles at once —
// delays, templates, finalizers, deletion, chains, other kinds — and bad
// ones are refused or reported without disturbing anything else.
func TestUserStages(t *testing.T) {
	e := newEnv(t)
	e.createCluster("stages", threeNodesFastFailures...)
	client := e.client()

	t.Run("invalid stages are refused", func(t *testing.T) {
		e := e.in(t)
		for field, spec := range map[string]string{
			"spec.selector.matchExpressions[0].operator": `{resourceRef: {apiGroup: v1, kind: Pod}, selector: {matchExpressions: [{key: .status.phase, operator: Near, values: [x]}]}, next: {}}`,
			"spec.resourceRef.kind":                      `{resourceRef: {apiGroup: v1}, next: {}}`,
			"spec.delay.durationMilliseconds":            `{resourceRef: {kind: Pod}, delay: {durationMilliseconds: -5}, next: {}}`,
		} {
			f := filepath.Join(t.TempDir(), "bad.yaml")
			writeFile(t, f, []byte("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: bad}\nspec: "+spec+"\n"))
			// The API server's own message: with CEL rules in the CRD it
			// adds a line saying they were not checked, so not one line.
			if r := e.run("kubectl", "--name", e.cluster, "apply", "-f", f); r.code == 0 || !strings.Contains(r.stderr, field) {
				t.Errorf("%s: exit %d, stderr %q; want a refusal naming the field", field, r.code, r.stderr)
			}
		}
		// KWOK v0.8's rules, refused by the API server naming the field.
		for field, spec := range map[string]string{
			"spec.steps[0]: Invalid value: a step is exactly one of":                                      `{resourceRef: {kind: Pod}, steps: [{event: {reason: A}, delete: true}]}`,
			"spec.steps and spec.next are exclusive":                                                      `{resourceRef: {kind: Pod}, next: {delete: true}, steps: [{delete: true}]}`,
			"spec.selector.matchExpressions[0]: Invalid value: a matchExpressions item is exactly one of": `{resourceRef: {kind: Pod}, selector: {matchExpressions: [{cel: {expression: "true"}, key: .a, operator: Exists}]}, steps: [{delete: true}]}`,
		} {
			f := filepath.Join(t.TempDir(), "bad.yaml")
			writeFile(t, f, []byte("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: bad}\nspec: "+spec+"\n"))
			e.fails(field, "kubectl", "--name", e.cluster, "apply", "-f", f)
		}
	})

	t.Run("a stage that does not compile is reported on it", func(t *testing.T) {
		e := e.in(t)
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: bad-jq}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector: {matchExpressions: [{key: '.metadata.labels[', operator: Exists}]}
  next: {statusTemplate: "phase: Failed"}
`)
		waitEvent(t, client, "", "bad-jq", "StageInvalid", "spec.selector.matchExpressions[0].key")
		eventually(t, 30*time.Second, "bad-jq Accepted False", func() error {
			got := e.kubectl("get", "stage", "bad-jq", "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status} {.status.conditions[?(@.type=="Accepted")].message}`).stdout
			if !strings.HasPrefix(got, "False ") || !strings.Contains(got, "spec.selector.matchExpressions[0].key") {
				return fmt.Errorf("Accepted %q", got)
			}
			return nil
		})
		// Mended, it carries no condition of the simulator's, as in KWOK.
		e.kubectl("patch", "stage", "bad-jq", "--type=json", `-p=[{"op": "replace", "path": "/spec/selector/matchExpressions/0/key", "value": ".metadata.labels.never"}]`)
		waitStageAccepted(t, e, "bad-jq")
		if got := e.kubectl("get", "stage", "bad-jq", "-o", `jsonpath={.status.conditions}`).stdout; got != "" {
			t.Errorf("the mended Stage keeps conditions %s", got)
		}
		e.kubectl("delete", "stage", "bad-jq")
	})

	// KWOK's own e2e case: a Stage on Stages that marks each Stage without
	// conditions Available. In KWOK nothing else writes a Stage's status,
	// so it matches; kubesim must leave a Stage's conditions to its users.
	t.Run("a Stage on Stages selects by conditions as in KWOK", func(t *testing.T) {
		e := e.in(t)
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: mark-available
  annotations: {e2e.kubesim.io/mark-available: "yes"}
spec:
  resourceRef: {apiGroup: kwok.x-k8s.io/v1alpha1, kind: Stage}
  selector:
    matchAnnotations: {e2e.kubesim.io/mark-available: "yes"}
    matchExpressions:
    - {key: .status.conditions, operator: DoesNotExist}
  next:
    statusTemplate: |
      conditions:
      - type: Available
        status: "True"
        reason: Marked
        message: marked by a Stage
        lastTransitionTime: {{ Now | Quote }}
`)
		eventually(t, 60*time.Second, "mark-available marks itself Available", func() error {
			got := e.kubectl("get", "stage", "mark-available", "-o", `jsonpath={range .status.conditions[*]}{.type}={.status} {end}`).stdout
			if strings.TrimSpace(got) != "Available=True" {
				return fmt.Errorf("conditions %q", got)
			}
			return nil
		})
		e.kubectl("delete", "stage", "mark-available")
	})

	t.Run("delay and jitter; label selection; custom condition; a chain", func(t *testing.T) {
		e := e.in(t)
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: slow-start}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.labels.speed', operator: In, values: [slow]}
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.phase', operator: In, values: [Pending]}
  weight: 10
  delay: {durationMilliseconds: 3000, jitterDurationMilliseconds: 5000}
  immediateNextStage: true
  next:
    statusTemplate: |
      phase: Running
      startTime: {{ Now | Quote }}
      podIP: {{ PodIP | Quote }}
      conditions:
      - type: Ready
        status: "True"
        lastTransitionTime: {{ Now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: mark-checked}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {speed: slow}
    matchExpressions:
    - {key: '.status.phase', operator: In, values: [Running]}
    - {key: '.status.conditions[]? | select(.type == "example.com/Checked") | .status', operator: NotIn, values: ["True"]}
  weight: 10
  next:
    statusTemplate: |
      conditions:
      - type: example.com/Checked
        status: "True"
        reason: ChainedStage
        lastTransitionTime: {{ Now | Quote }}
`)
		slow := labelledPod("slow-1", map[string]string{"speed": "slow"})
		createPod(t, client, slow)
		createPod(t, client, testPod("plain-1"))
		waitPhase(t, client, "plain-1", corev1.PodRunning)
		if p := getPod(t, client, "slow-1"); p.Status.Phase != corev1.PodPending {
			t.Errorf("slow pod is %s when the unlabelled one runs; want Pending for 3-8s", p.Status.Phase)
		}
		var p *corev1.Pod
		eventually(t, 30*time.Second, "slow pod Running and checked", func() error {
			p = getPod(t, client, "slow-1")
			if p.Status.Phase != corev1.PodRunning || conditionStatus(p, "example.com/Checked") != "True" {
				return fmt.Errorf("phase %s, conditions %v", p.Status.Phase, p.Status.Conditions)
			}
			return nil
		})
		if p.Status.StartTime == nil {
			t.Fatal("no startTime")
		}
		// Both times have whole seconds: a 3-8s delay shows as 3-9s.
		if d := p.Status.StartTime.Sub(p.CreationTimestamp.Time); d < 3*time.Second || d > 9*time.Second {
			t.Errorf("slow pod started %s after creation; want 3-8s", d)
		}
		if p.Status.PodIP == "" {
			t.Error("PodIP helper gave no address")
		}
		if conditionStatus(getPod(t, client, "plain-1"), "example.com/Checked") != "" {
			t.Error("unlabelled pod got the chained condition")
		}
	})

	t.Run("finalizers added and removed with an event", func(t *testing.T) {
		e := e.in(t)
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: hold-finalizer}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {fin: hold}
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.metadata.finalizers[]?', operator: NotIn, values: [example.com/hold]}
  weight: 10
  next:
    finalizers: {add: [{value: example.com/hold}]}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: release-finalizer}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: Exists}
    - {key: '.metadata.finalizers[]?', operator: In, values: [example.com/hold]}
  weight: 10
  next:
    event: {type: Normal, reason: Released, message: finalizer released}
    finalizers: {remove: [{value: example.com/hold}]}
`)
		p := labelledPod("fin-1", map[string]string{"fin": "hold"})
		createPod(t, client, p)
		eventually(t, 30*time.Second, "finalizer added and pod Running", func() error {
			p := getPod(t, client, "fin-1")
			if len(p.Finalizers) != 1 || p.Finalizers[0] != "example.com/hold" || p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("finalizers %v, phase %s", p.Finalizers, p.Status.Phase)
			}
			return nil
		})
		if err := client.CoreV1().Pods("default").Delete(context.Background(), "fin-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, client, "fin-1")
		waitEvent(t, client, "default", "fin-1", "Released", "finalizer released")
	})

	t.Run("a delete stage removes objects", func(t *testing.T) {
		e := e.in(t)
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: doom}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {doomed: "true"}
    matchExpressions: [{key: '.status.phase', operator: In, values: [Running]}]
  weight: 10
  next: {delete: true}
`)
		p := labelledPod("doomed-1", map[string]string{"doomed": "true"})
		createPod(t, client, p)
		waitGone(t, client, "doomed-1")
	})

	t.Run("a deleted Job pod ends Failed before it goes and its Job replaces it", func(t *testing.T) {
		e := e.in(t)
		// A Job with a podFailurePolicy counts a pod only once its phase
		// is terminal: a simulated pod must end as a kubelet ends it.
		e.apply(`
apiVersion: batch/v1
kind: Job
metadata: {name: held, namespace: default}
spec:
  backoffLimit: 3
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  template:
    metadata: {labels: {job: held}, annotations: {kubesim.io/run-duration: 1h}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`)
		first := ""
		eventually(t, 60*time.Second, "the Job's pod running", func() error {
			pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "job=held"})
			if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pods %d, %v", len(pods.Items), err)
			}
			first = pods.Items[0].Name
			return nil
		})
		e.kubectl("delete", "pod", first, "--wait=false")
		eventually(t, 60*time.Second, "the deleted pod gone and a replacement running", func() error {
			pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "job=held"})
			if err != nil {
				return err
			}
			for _, p := range pods.Items {
				if p.Name == first {
					return fmt.Errorf("%s still there (%s, finalizers %v)", first, p.Status.Phase, p.Finalizers)
				}
			}
			if len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning {
				return fmt.Errorf("%d pods", len(pods.Items))
			}
			return nil
		})
		e.kubectl("delete", "job", "held", "--cascade=foreground", "--wait=false")
	})

	t.Run("a broken template warns and disturbs nothing else; deleting it heals", func(t *testing.T) {
		e := e.in(t)
		e.apply(labelledPendingStage("broken", `phase: {{ fail "deliberately broken" }}`))
		waitStageAccepted(t, e, "broken")
		p := labelledPod("broken-1", map[string]string{"broken": "true"})
		createPod(t, client, p)
		createPod(t, client, testPod("fine-1"))
		waitPhase(t, client, "fine-1", corev1.PodRunning)
		waitEvent(t, client, "default", "broken-1", "StageFailed", "deliberately broken")
		if p := getPod(t, client, "broken-1"); p.Status.Phase != corev1.PodPending {
			t.Fatalf("pod of the broken stage is %s", p.Status.Phase)
		}
		e.kubectl("delete", "stage", "broken")
		waitPhase(t, client, "broken-1", corev1.PodRunning)
	})

	t.Run("a user stage replaces the built-in of its name until deleted", func(t *testing.T) {
		e := e.in(t)
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: pod-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.phase', operator: In, values: [Pending]}
  next:
    statusTemplate: |
      phase: Running
      conditions:
      - {type: Ready, status: "True"}
      - {type: example.com/Replaced, status: "True"}
`)
		createPod(t, client, testPod("replaced-1"))
		waitPhase(t, client, "replaced-1", corev1.PodRunning)
		if conditionStatus(getPod(t, client, "replaced-1"), "example.com/Replaced") != "True" {
			t.Error("the user's pod-ready did not run")
		}
		e.kubectl("delete", "stage", "pod-ready")
		// The built-in is back once a new pod gets an IP from it.
		eventually(t, 30*time.Second, "built-in pod-ready back", func() error {
			name := fmt.Sprintf("builtin-%d", time.Now().UnixNano())
			createPod(t, client, testPod(name))
			waitPhase(t, client, name, corev1.PodRunning)
			if p := getPod(t, client, name); conditionStatus(p, "example.com/Replaced") != "" || p.Status.PodIP == "" {
				return errors.New("still the user's stage")
			}
			return nil
		})
	})

	t.Run("stages for a Service and a custom resource", func(t *testing.T) {
		e := e.in(t)
		// The simulator may act on the kinds Stages name, and no others.
		canI := func(verb, resource string) string {
			return strings.TrimSpace(e.run("kubectl", "--name", e.cluster, "auth", "can-i", verb, resource, "--as", "kubesim:kubelet-sim").stdout)
		}
		for _, resource := range []string{"secrets", "services", "widgets.example.com", "clusterrolebindings"} {
			if got := canI("delete", resource); got != "no" {
				t.Errorf("before any Stage names them, the simulator may delete %s: %q", resource, got)
			}
		}
		e.apply(crdManifest("Widget", "widgets") + "---\n" + readyStage("widget-ready", "Widget", "size: {{ .spec.size }}") + `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: service-load-balancer}
spec:
  resourceRef: {apiGroup: v1, kind: Service}
  selector:
    matchExpressions:
    - {key: '.spec.type', operator: In, values: [LoadBalancer]}
    - {key: '.status.loadBalancer.ingress', operator: DoesNotExist}
  next:
    statusTemplate: |
      loadBalancer:
        ingress:
        - ip: 192.0.2.10
`)
		e.kubectl("create", "service", "loadbalancer", "web", "--tcp=80:80")
		waitIngress(t, client, "web", "192.0.2.10")
		// A changed Stage takes effect at once, for the next Service.
		e.kubectl("patch", "stage", "service-load-balancer", "--type=merge", "-p",
			`{"spec":{"next":{"statusTemplate":"loadBalancer:\n  ingress:\n  - ip: 192.0.2.20\n"}}}`)
		e.kubectl("create", "service", "loadbalancer", "api", "--tcp=443:443")
		waitIngress(t, client, "api", "192.0.2.20")
		e.applyServed("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: 3}\n")
		eventually(t, 30*time.Second, "widget ready", func() error {
			out := e.kubectl("get", "widget", "w1", "-o", "jsonpath={.status.ready}/{.status.size}").stdout
			if out != "true/3" {
				return fmt.Errorf("status %q", out)
			}
			return nil
		})
		for resource, want := range map[string]string{"services": "yes", "widgets.example.com": "yes", "secrets": "no", "clusterrolebindings": "no"} {
			if got := canI("delete", resource); got != want {
				t.Errorf("with Stages for Services and Widgets, may the simulator delete %s: %q, want %q", resource, got, want)
			}
		}
	})

	t.Run("impersonation: the write is made as the named user, granted only that", func(t *testing.T) {
		e := e.in(t)
		canI := func(verb, resource string, as ...string) string {
			args := append([]string{"kubectl", "--name", e.cluster, "auth", "can-i", verb, resource, "--as", "kubesim:kubelet-sim"}, as...)
			return strings.TrimSpace(e.run(args...).stdout)
		}
		e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: configmap-stamped-by-alice}
spec:
  resourceRef: {apiGroup: v1, kind: ConfigMap}
  selector:
    matchExpressions:
    - cel: {expression: "has(self.metadata.labels) && 'stamp' in self.metadata.labels && !has(self.data)"}
  steps:
  - patch:
      template: "data: {stamped: 'yes'}"
      type: merge
      impersonation: {username: alice}
`)
		eventually(t, 30*time.Second, "impersonate granted for alice only", func() error {
			if got := canI("impersonate", "users/alice"); got != "yes" {
				return fmt.Errorf("may impersonate alice: %q", got)
			}
			return nil
		})
		if got := canI("impersonate", "users/bob"); got != "no" {
			t.Errorf("may impersonate bob: %q, want no", got)
		}
		// alice may not patch ConfigMaps: the write fails as hers.
		e.kubectl("create", "configmap", "stamp-me")
		e.kubectl("label", "configmap", "stamp-me", "stamp=yes")
		waitEvent(t, client, "default", "stamp-me", "StageFailed", `"alice"`)
		// Granted to her, the write goes through.
		e.kubectl("create", "role", "alice-configmaps", "--verb=get,patch", "--resource=configmaps")
		e.kubectl("create", "rolebinding", "alice-configmaps", "--role=alice-configmaps", "--user=alice")
		eventually(t, 60*time.Second, "configmap stamped as alice", func() error {
			cm, err := client.CoreV1().ConfigMaps("default").Get(context.Background(), "stamp-me", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["stamped"] != "yes" {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
		e.kubectl("delete", "stage", "configmap-stamped-by-alice")
	})

	t.Run("chaos stages: node not ready; crash loop; failed pod", func(t *testing.T) {
		e := e.in(t)
		e.kubectl("label", "node", "node-000002", "chaos.kubesim.io/node=not-ready")
		waitNode(t, client, "node-000002", corev1.ConditionFalse)
		e.kubectl("label", "node", "node-000002", "chaos.kubesim.io/node-")
		waitNode(t, client, "node-000002", corev1.ConditionTrue)

		crash := labelledPod("crash-1", map[string]string{"chaos.kubesim.io/pod": "crash-loop"})
		crash.Annotations = map[string]string{"chaos.kubesim.io/restart-delay": "500ms", "chaos.kubesim.io/delay": "500ms"}
		createPod(t, client, crash)
		eventually(t, 30*time.Second, "restarts counted", func() error {
			p := getPod(t, client, "crash-1")
			if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount < 2 {
				return fmt.Errorf("container statuses %v", p.Status.ContainerStatuses)
			}
			if p.Status.ContainerStatuses[0].LastTerminationState.Terminated == nil {
				return errors.New("no last termination state")
			}
			return nil
		})
		out := e.kubectl("get", "pod", "crash-1").stdout
		if !strings.Contains(out, "CrashLoopBackOff") && !strings.Contains(out, "Running") {
			t.Errorf("kubectl shows %q", out)
		}

		failed := labelledPod("failed-1", map[string]string{"chaos.kubesim.io/pod": "failed"})
		createPod(t, client, failed)
		waitPhase(t, client, "failed-1", corev1.PodFailed)
	})

	t.Run("node stop: NotReady, pods evicted and rescheduled; start: Ready", func(t *testing.T) {
		e := e.in(t)
		e.fails(`node "nope" not found`, "node", "stop", "--name", "stages", "nope")
		d := deployment("victim", 2)
		if _, err := client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPods(t, client, "app=victim", 2)
		pods := runningPods(t, client, "app=victim")
		node := pods[0].Spec.NodeName
		// A pod that tolerates its node's loss stays: the node-lifecycle
		// controller marks it NotReady, and when the node is back the
		// simulated kubelet sets it Ready again, as a kubelet's status sync does.
		stays := testPod("stays")
		stays.Spec.NodeName = node
		stays.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
		createPod(t, client, stays)
		waitReady := func(want corev1.ConditionStatus) {
			eventually(t, 60*time.Second, "pod stays Ready="+string(want), func() error {
				if got := conditionStatus(getPod(t, client, "stays"), corev1.PodReady); got != want {
					return fmt.Errorf("Ready=%s", got)
				}
				return nil
			})
		}
		waitReady(corev1.ConditionTrue)
		e.must("node", "stop", "--name", "stages", node)
		waitNode(t, client, node, corev1.ConditionUnknown)
		waitReady(corev1.ConditionFalse)
		eventually(t, 60*time.Second, "pods rescheduled off the stopped node", func() error {
			running := 0
			for _, p := range runningPods(t, client, "app=victim") {
				if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
					return fmt.Errorf("pod %s still on %s", p.Name, node)
				}
				if p.Spec.NodeName != node && podReady(&p) {
					running++
				}
			}
			if running != 2 {
				return fmt.Errorf("%d pods running elsewhere", running)
			}
			return nil
		})
		e.must("node", "start", "--name", "stages", node)
		waitNode(t, client, node, corev1.ConditionTrue)
		waitUntainted(t, client, node)
		waitReady(corev1.ConditionTrue)
		eventually(t, 60*time.Second, "evicted pod gone", func() error {
			for _, p := range runningPods(t, client, "app=victim") {
				if p.Spec.NodeName == node {
					return fmt.Errorf("pod %s still on %s", p.Name, node)
				}
			}
			return nil
		})
	})
}

// TestRealisticStages: the realistic set takes pods through container
// creation with delays before they run.
func TestRealisticStages(t *testing.T) {
	e := newEnv(t)
	e.fails(`stages: "slow" is not a stage set`, "create", "cluster", "--name", "bad", "--stages", "slow")
	e.must("create", "cluster", "--name", "real", "--nodes", "1", "--stages", "realistic")
	client := e.client()
	p := testPod("init-1")
	p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
	createPod(t, client, p)
	eventually(t, 30*time.Second, "containers waiting while the pod initializes", func() error {
		p := getPod(t, client, "init-1")
		if p.Status.Phase != corev1.PodPending || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return fmt.Errorf("phase %s, containers %v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		return nil
	})
	waitPhase(t, client, "init-1", corev1.PodRunning)
	got := getPod(t, client, "init-1")
	if got.Status.InitContainerStatuses[0].State.Terminated == nil || !podReady(got) {
		t.Errorf("running pod: init %v, ready %v", got.Status.InitContainerStatuses, podReady(got))
	}
	if d := got.Status.StartTime.Sub(got.CreationTimestamp.Time); d < time.Second {
		t.Errorf("realistic pod admitted %s after creation; want a delay", d)
	}
}

func waitIngress(t *testing.T, client kubernetes.Interface, service, ip string) {
	t.Helper()
	eventually(t, 30*time.Second, "LoadBalancer ingress of "+service, func() error {
		svc, err := client.CoreV1().Services("default").Get(context.Background(), service, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != ip {
			return fmt.Errorf("ingress %v", ing)
		}
		return nil
	})
}

// TestKWOKStageManifests: the Stage manifests of KWOK's current release
// (testdata/kwok-v0.8.0, its kustomizations applied unchanged) apply and
// behave as KWOK documents them — the volume stages' steps, apply and CEL
// included. (testdata/kwok-stages, the release before, has the same node
// and pod stages.)
func TestKWOKStageManifests(t *testing.T) {
	e := newEnv(t)
	e.cluster = "kwok"
	e.must("create", "cluster", "--name", "kwok", "--nodes", "1")
	client := e.client()
	ctx := context.Background()
	kwok := func(path string) string { return filepath.Join("testdata", "kwok-v0.8.0", "stage", path) }

	// chaos/node-not-ready: the labelled node reports NotReady and stays so
	// (kubesim's node-initialize respects KWOK's label), until unlabelled.
	e.kubectl("apply", "-f", kwok("node/chaos/node-not-ready.yaml"))
	e.kubectl("label", "node", "node-000000", "node-not-ready.stage.kwok.x-k8s.io=true")
	waitNode(t, client, "node-000000", corev1.ConditionFalse)
	e.kubectl("label", "node", "node-000000", "node-not-ready.stage.kwok.x-k8s.io-")
	waitNode(t, client, "node-000000", corev1.ConditionTrue)

	// node/fast and node/heartbeat*: a new node is initialized by KWOK's
	// stage (its defaults: 1M pods) and heartbeats every 20-45s. The two
	// heartbeats are alternatives (KWOK's kustomizations take one): both
	// apply, but with both a Ready node would take turns between them, as
	// in KWOK, and the lease one waits 10 minutes.
	for _, f := range []string{"node/fast/node-initialize.yaml", "node/heartbeat/node-heartbeat.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml"} {
		e.kubectl("apply", "-f", kwok(f))
	}
	e.kubectl("delete", "-f", kwok("node/heartbeat-with-lease/node-heartbeat-with-lease.yaml"))
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-node"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNode(t, client, "kwok-node", corev1.ConditionTrue)
	n, err := client.CoreV1().Nodes().Get(ctx, "kwok-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pods := n.Status.Capacity[corev1.ResourcePods]; pods.String() != "1M" {
		t.Errorf("kwok-node capacity pods %s, want KWOK's default 1M", pods.String())
	}
	firstBeat := readyHeartbeat(n)

	// pod/general: create → init containers running → completed → ready,
	// with the delays zeroed by KWOK's own annotations.
	e.kubectl("apply", "-k", kwok("pod/general"))
	zero := map[string]string{}
	for _, s := range []string{"pod-create", "pod-init-container-running", "pod-init-container-completed", "pod-ready", "pod-complete", "pod-delete"} {
		zero[s+".stage.kwok.x-k8s.io/delay"] = "0"
		zero[s+".stage.kwok.x-k8s.io/jitter-delay"] = "0"
	}
	p := testPod("general-1")
	p.Annotations = zero
	p.Spec.NodeName = "node-000000"
	p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
	createPod(t, client, p)
	waitPhase(t, client, "general-1", corev1.PodRunning)
	eventually(t, 30*time.Second, "general pod ready, init container completed", func() error {
		p := getPod(t, client, "general-1")
		if !podReady(p) || len(p.Status.InitContainerStatuses) != 1 || p.Status.InitContainerStatuses[0].State.Terminated == nil {
			return fmt.Errorf("ready %v, init %v", podReady(p), p.Status.InitContainerStatuses)
		}
		return nil
	})
	grace := int64(1)
	if err := client.CoreV1().Pods("default").Delete(ctx, "general-1", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client, "general-1")

	// pod/chaos: a running container fails; an init container fails.
	e.kubectl("apply", "-f", kwok("pod/chaos/"))
	p = labelledPod("chaos-running", map[string]string{"pod-container-running-failed.stage.kwok.x-k8s.io": "true"})
	p.Annotations = zero
	createPod(t, client, p)
	waitPhase(t, client, "chaos-running", corev1.PodFailed)
	p = labelledPod("chaos-init", map[string]string{"pod-init-container-running-failed.stage.kwok.x-k8s.io": "true"})
	p.Annotations = zero
	p.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
	createPod(t, client, p)
	waitPhase(t, client, "chaos-init", corev1.PodFailed)
	e.kubectl("delete", "-f", kwok("pod/chaos/"))

	// pod/fast in place of pod/general: Running at once; a Job completes.
	e.kubectl("delete", "-k", kwok("pod/general"))
	e.kubectl("apply", "-k", kwok("pod/fast"))
	createPod(t, client, testPod("fast-1"))
	waitPhase(t, client, "fast-1", corev1.PodRunning)
	e.kubectl("create", "job", "once", "--image=busybox")
	eventually(t, 60*time.Second, "job complete", func() error {
		j, err := client.BatchV1().Jobs("default").Get(ctx, "once", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if j.Status.Succeeded != 1 {
			return fmt.Errorf("succeeded %d", j.Status.Succeeded)
		}
		return nil
	})
	if err := client.CoreV1().Pods("default").Delete(ctx, "fast-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client, "fast-1")

	// node/heartbeat: the Ready condition's heartbeat moved on.
	eventually(t, 60*time.Second, "KWOK heartbeat", func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, "kwok-node", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !readyHeartbeat(n).After(firstBeat) {
			return fmt.Errorf("heartbeat still %s", firstBeat)
		}
		return nil
	})
	// volume/fast: a claim of StorageClass kwok-volume gets a volume made
	// by pvc-provision's apply step, bound by its patches and pv-bind's;
	// deleted, its volume is released (pvc-delete's apply of the status)
	// and deleted (pv-delete).
	e.kubectl("apply", "-k", kwok("volume/fast"))
	e.apply(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  storageClassName: kwok-volume
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
`)
	var volume string
	eventually(t, 60*time.Second, "claim provisioned and bound", func() error {
		pvc, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != "pvc-"+string(pvc.UID) {
			return fmt.Errorf("phase %s, volume %q", pvc.Status.Phase, pvc.Spec.VolumeName)
		}
		pv, err := client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pv.Status.Phase != corev1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != pvc.UID {
			return fmt.Errorf("volume phase %s, claimRef %v", pv.Status.Phase, pv.Spec.ClaimRef)
		}
		if size := pv.Spec.Capacity[corev1.ResourceStorage]; size.String() != "5Gi" {
			return fmt.Errorf("volume capacity %s", size.String())
		}
		volume = pv.Name
		return nil
	})
	if got := e.kubectl("get", "stage", "pvc-provision", "-o", `jsonpath={.status.observedGeneration} {.status.conditions}`).stdout; got != "1 " {
		t.Errorf("pvc-provision's status %q, want observedGeneration 1 and no conditions", got)
	}
	e.kubectl("delete", "pvc", "data", "--wait=false")
	eventually(t, 60*time.Second, "volume released and deleted", func() error {
		if _, err := client.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("volume %s still there", volume)
		}
		return nil
	})

	// docs/stages.md's steps example: a LoadBalancer gets its address (a
	// patch step) and an EndpointSlice (an apply step of another kind).
	e.apply(docBlock(t, "../../docs/stages.md", "<!-- stage-example"))
	e.kubectl("create", "service", "loadbalancer", "shop", "--tcp=8080:80")
	eventually(t, 60*time.Second, "docs/stages.md's stage example", func() error {
		svc, err := client.CoreV1().Services("default").Get(ctx, "shop", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP != "203.0.113.10" {
			return fmt.Errorf("ingress %v", ing)
		}
		slice, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "shop-lb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(slice.Ports) != 1 || *slice.Ports[0].Port != 8080 || slice.Labels["kubernetes.io/service-name"] != "shop" {
			return fmt.Errorf("slice ports %v labels %v", slice.Ports, slice.Labels)
		}
		return nil
	})

	// Nothing KWOK publishes was left out as invalid.
	events, err := client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=StageInvalid"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		t.Errorf("stage %s invalid: %s", ev.InvolvedObject.Name, ev.Message)
	}
}

func readyHeartbeat(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastHeartbeatTime.Time
		}
	}
	return time.Time{}
}

// crdManifest is a namespaced CustomResourceDefinition of kind in
// example.com/v1, with a status subresource and any fields.
func crdManifest(kind, plural string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.example.com}
spec:
  group: example.com
  names: {kind: %[1]s, plural: %[2]s, singular: %[3]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, kind, plural, strings.ToLower(kind))
}

// applyServed applies an object of a kind whose CRD may still be
// settling: until the kind is served.
func (e *env) applyServed(manifest string) {
	e.t.Helper()
	eventually(e.t, 30*time.Second, "applying an object of a new kind", func() error {
		f := filepath.Join(e.t.TempDir(), "object.yaml")
		writeFile(e.t, f, []byte(manifest))
		if r := e.run("kubectl", "--name", e.cluster, "apply", "-f", f); r.code != 0 {
			return errors.New(r.stderr)
		}
		return nil
	})
}

// labelledPendingStage is a Stage named name that renders statusTemplate
// (no single quotes) for the Pending pods labelled name=true, before the
// built-in stages.
func labelledPendingStage(name, statusTemplate string) string {
	return fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: %[1]s}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {%[1]s: "true"}
    matchExpressions: [{key: '.status.phase', operator: In, values: [Pending]}]
  weight: 10
  next:
    statusTemplate: '%[2]s'
`, name, statusTemplate)
}

// waitStageAccepted waits until the simulator has taken up the Stage: it
// has read its generation (status.observedGeneration) and left no Accepted
// False condition on it. A pod made before might meet the stages without it.
func waitStageAccepted(t *testing.T, e *env, name string) {
	t.Helper()
	eventually(t, 30*time.Second, "Stage "+name+" accepted", func() error {
		r := e.run("kubectl", "--name", e.cluster, "get", "stage", name, "-o",
			`jsonpath={.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Accepted")].status}`)
		if r.code != 0 {
			return fmt.Errorf("%s", r.stderr)
		}
		if f := strings.Fields(r.stdout); len(f) != 2 || f[0] != f[1] {
			return fmt.Errorf("generation, observedGeneration and Accepted: %q", r.stdout)
		}
		return nil
	})
}

// readyStage is a Stage named name that sets status.ready, and the status
// fields more, on objects of kind in example.com that lack it.
func readyStage(name, kind, more string) string {
	return fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: %s}
spec:
  resourceRef: {apiGroup: example.com, kind: %s}
  selector:
    matchExpressions: [{key: '.status.ready', operator: DoesNotExist}]
  next:
    statusTemplate: |
      ready: true
      %s
`, name, kind, more)
}

// docBlock is the fenced block that follows marker in the Markdown file
// page (a path from this package's directory, such as
// "../../docs/stages.md").
func docBlock(t *testing.T, page, marker string) string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(page, "../../")
	_, after, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no %s block", name, marker)
	}
	parts := strings.SplitN(after, "```", 3)
	if len(parts) < 3 {
		t.Fatalf("%s's %s block is not fenced", name, marker)
	}
	_, body, _ := strings.Cut(parts[1], "\n") // drop the fence's language
	return body
}

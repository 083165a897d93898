//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesim/kubesim/internal/explain"
)

// kubesim ui in a real Chromium: the map counts what the cluster has, a
// pod a node selector leaves Pending is listed with the scheduler's
// reason, and clicking it shows explain's per-node verdicts; a node
// stopped from the CLI turns NotReady on the page without a reload. The
// page loads nothing from anywhere but its server, which wants its token
// and listens on loopback only.
func TestUI(t *testing.T) {
	e := newEnv(t)
	e.createCluster("ui", threeNodesFastFailures...)
	client := e.client()
	makeDeployment(t, client, "web", 4)
	picky := testPod("picky")
	picky.Spec.NodeSelector = map[string]string{"disktype": "ssd"}
	createPod(t, client, picky)
	eventually(t, 30*time.Second, "web Running and picky tried", func() error {
		if n := len(runningPods(t, client, "app=web")); n != 4 {
			return fmt.Errorf("%d of 4 Running", n)
		}
		if p := getPod(t, client, "picky"); len(p.Status.Conditions) == 0 {
			return fmt.Errorf("picky not tried yet")
		}
		return nil
	})

	e.fails("--address 0.0.0.0: the UI listens on a loopback address only", "ui", "--name", "ui", "--address", "0.0.0.0", "--no-open")
	base := startUI(t, e, "ui", "--drain-timeout", "6s")

	// The token: none, or a wrong one, is refused.
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://" + u.Host + "/", "http://" + u.Host + "/api/watch", "http://" + u.Host + "/?token=wrong"} {
		resp, err := http.Get(bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s: %d, want 401", bad, resp.StatusCode)
		}
	}

	page := browser(t, 1400, 900)
	var mu sync.Mutex
	var requested []string
	if err := chromedp.Listen(page, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, r.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(page, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`body[data-rendered="true"]`))); err != nil {
		t.Fatal(err)
	}

	pods, err := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, "the map's counts", fmt.Sprintf(`[document.getElementById("count-nodes").textContent, document.getElementById("count-pods").textContent,
		document.getElementById("count-pending").textContent, document.querySelectorAll(".node").length].join(" ")`), fmt.Sprintf("3 %d 1 3", len(pods.Items)))
	waitPage(t, page, "picky in the Pending panel with the scheduler's reason",
		`(document.querySelector('.pending-item[data-pod="default/picky"] .pr')||{}).textContent||""`, "didn't match Pod's node affinity/selector")
	shot(t, page, "ui-map")

	// The drawer says what explain -o json says, node by node.
	var x explain.Explanation
	if err := json.Unmarshal([]byte(e.must("explain", "pod", "picky", "--name", "ui", "-o", "json").stdout), &x); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range x.Nodes {
		reason := ""
		if n.Plugin != "" {
			reason = n.Plugin + ": " + strings.Join(n.Reasons, "; ")
		}
		want = append(want, n.Name+" "+n.Filter+" "+reason)
	}
	sort.Strings(want)
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`.pending-item[data-pod="default/picky"]`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, "the drawer's verdicts equal explain's",
		`[...document.querySelectorAll("#drawer tr[data-node]")].map(r => r.dataset.node+" "+r.dataset.filter+" "+r.dataset.reason).sort().join("\n")`,
		strings.Join(want, "\n"))
	waitPage(t, page, "the drawer's events and YAML of the pod",
		`[...document.querySelectorAll("#drawer table.events td")].map(td => td.textContent).join(" ") + " | " + ((document.querySelector("#drawer pre.yaml")||{}).textContent||"")`,
		"FailedScheduling")
	waitPage(t, page, "the drawer's YAML of the pod", `(document.querySelector("#drawer pre.yaml")||{}).textContent||""`, "disktype: ssd")
	shot(t, page, "ui-explain")

	// A scheduled pod's drawer says why its node won, as explain pod does.
	web := runningPods(t, client, "app=web")[0]
	var decided string
	for _, line := range strings.Split(e.must("explain", "pod", web.Name, "--name", "ui").stdout, "\n") {
		if strings.HasPrefix(line, "Decided: ") {
			decided = line
		}
	}
	if decided == "" {
		t.Fatalf("explain pod %s has no Decided line", web.Name)
	}
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#drawer-close`)), chromedp.Click(chromedp.CSS(`.chip[data-pod="default/`+web.Name+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, "the drawer's Decided line", `(document.querySelector("#drawer .decided")||{}).textContent||""`, decided)
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#drawer-close`))); err != nil {
		t.Fatal(err)
	}

	// Live: a node stopped from the CLI turns NotReady without a reload.
	e.must("node", "stop", "--name", "ui", "node-000001")
	waitNode(t, client, "node-000001", corev1.ConditionUnknown)
	waitPageWithin(t, 5*time.Second, page, "node-000001 NotReady on the page", `document.querySelector('.node[data-node="node-000001"]').dataset.ready`, "Unknown")
	shot(t, page, "ui-notready")

	waitPage(t, page, "the timeline has the node's NodeNotReady",
		`[...document.querySelectorAll("#timeline-list .ev")].map(r => r.dataset.reason+" "+r.dataset.object).join("\n")`, "NodeNotReady Node/node-000001")

	// A drain from the page, refused by a PodDisruptionBudget, says so.
	minAvailable := intstr.FromInt32(4)
	if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(context.Background(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var busy string
	eventually(t, 30*time.Second, "a Ready node running a pod of web", func() error {
		for _, p := range runningPods(t, client, "app=web") {
			if p.Spec.NodeName != "node-000001" {
				busy = p.Spec.NodeName
				return nil
			}
		}
		return fmt.Errorf("none")
	})
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`.node[data-node="`+busy+`"]`)),
		chromedp.Click(chromedp.CSS(`#drawer button[data-action="drain"]`)), chromedp.Click(chromedp.CSS(`#confirm-yes`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, "the drain's refusal on the page", `(document.querySelector("#action-result")||{}).textContent||""`, "violate the pod's disruption budget")
	shot(t, page, "ui-drain-refused")
	if n, err := client.CoreV1().Nodes().Get(context.Background(), busy, metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Errorf("the drained node %s is not cordoned: %v", busy, err)
	}

	// Scale from the page, as kubectl scale does.
	if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#drawer-close`)), chromedp.Click(chromedp.CSS(`#legend span[data-owner="default/Deployment/web"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#scale-replicas`)), chromedp.SetValue(chromedp.CSS(`#scale-replicas`), "6"),
		chromedp.Click(chromedp.CSS(`#drawer button[data-action="scale"]`)), chromedp.Click(chromedp.CSS(`#confirm-yes`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, "the scale's output", `(document.querySelector("#action-result")||{}).textContent||""`, "deployment.apps/web scaled")
	shot(t, page, "ui-scale")
	eventually(t, 20*time.Second, "web scaled to 6 from the page", func() error {
		d, err := client.AppsV1().Deployments("default").Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if *d.Spec.Replicas != 6 {
			return fmt.Errorf("%d replicas", *d.Spec.Replicas)
		}
		return nil
	})

	// A change needs the page's header (no other site's form can post
	// one); a read-only page changes nothing.
	post := func(base, header string) int {
		u, _ := url.Parse(base)
		req, _ := http.NewRequest(http.MethodPost, "http://"+u.Host+"/api/action?"+u.RawQuery, strings.NewReader(`{"action":"cordon","node":"node-000000"}`))
		if header != "" {
			req.Header.Set("X-Kubesim-UI", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(base, ""); code != http.StatusForbidden {
		t.Errorf("a POST without the page's header: %d, want 403", code)
	}
	readOnly := startUI(t, e, "ui", "--read-only")
	if code := post(readOnly, "1"); code != http.StatusForbidden {
		t.Errorf("a POST to a read-only page: %d, want 403", code)
	}
	if n, _ := client.CoreV1().Nodes().Get(context.Background(), "node-000000", metav1.GetOptions{}); n.Spec.Unschedulable && busy != "node-000000" {
		t.Errorf("node-000000 cordoned by a refused request")
	}

	mu.Lock()
	defer mu.Unlock()
	for _, r := range requested {
		if !strings.HasPrefix(r, "http://"+u.Host+"/") && !strings.HasPrefix(r, "data:") {
			t.Errorf("the page requested %s, not of its server", r)
		}
	}
	if len(requested) < 4 {
		t.Errorf("only %d requests recorded: %v", len(requested), requested)
	}
}

// browser is a tab of headless Chromium (installed when missing) of the
// window's size, closed with the test; 5 minutes at most.
func browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	chromium := ensureChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(width, height))...)
	page, cancelPage := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelPage()
		cancelAlloc()
		cancel()
	})
	return page
}

// startUI runs kubesim ui for cluster and returns the URL it prints; the
// server is stopped with the test.
func startUI(t testing.TB, e *env, cluster string, flags ...string) string {
	t.Helper()
	return serveURL(t, e, append([]string{"ui", "--name", cluster, "--no-open"}, flags...)...)
}

// serveURL runs kubesim with args and returns the UI's URL it prints; it
// is stopped (Ctrl-C) with the test.
func serveURL(t testing.TB, e *env, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	found, ended := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(ended)
		s := bufio.NewScanner(out)
		for sent := false; s.Scan(); { // read to the end: the process never blocks on its output
			if m := regexp.MustCompile(`http://127\.0\.0\.1:\d+/(run\.html)?\?token=[0-9a-f]+`).FindString(s.Text()); m != "" && !sent {
				found <- m
				sent = true
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-ended:
		t.Fatalf("kubesim %s ended before it printed a URL (its stderr is above)", strings.Join(args, " "))
	case <-time.After(2 * time.Minute):
		t.Fatalf("kubesim %s printed no URL in 2 minutes", strings.Join(args, " "))
	}
	return ""
}

// waitPage waits until the expression's value, as a string, contains want.
func waitPage(t *testing.T, page context.Context, what, expr, want string) {
	t.Helper()
	waitPageWithin(t, 30*time.Second, page, what, expr, want)
}

func waitPageWithin(t *testing.T, within time.Duration, page context.Context, what, expr, want string) {
	t.Helper()
	var got string
	eventually(t, within, what, func() error {
		var err error
		if got, err = chromedp.Run(page, chromedp.Evaluate[string](`String(`+expr+`)`)); err != nil {
			return err
		}
		if !strings.Contains(got, want) {
			return fmt.Errorf("page has %q, want %q", got, want)
		}
		return nil
	})
}

// shot saves a screenshot of the page under $KUBESIM_SCREENSHOTS (to be
// looked at), or the test's temporary directory.
func shot(t testing.TB, page context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("KUBESIM_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// create --ui serves the page of the cluster it made; the map shows DRA
// devices in use on each node and, from the metrics API, each node's
// usage.
func TestUIDevicesAndUsage(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: gpu
  count: 2
  devices: [{driver: gpu.kubesim.io, count: 4, attributes: {model: H100}}]
`))
	// create --ui serves the page once the cluster is ready.
	e.cluster = "dev"
	base := serveURL(t, e, "create", "cluster", "--name", "dev", "--config", config, "--ui")
	e.apply(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.kubesim.io, count: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]
  containers:
  - name: train
    image: trainer
    resources: {claims: [{name: gpus}]}
`)
	client := e.client()
	var node string
	eventually(t, time.Minute, "trainer Running", func() error {
		p := getPod(t, client, "trainer")
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		node = p.Spec.NodeName
		return nil
	})
	page := browser(t, 1400, 900)
	if err := chromedp.Do(page, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`body[data-rendered="true"]`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, "the trainer's node with 2 of its 4 devices in use",
		`[...document.querySelectorAll(".node")].map(n => n.dataset.node + " " + ((n.querySelector(".badge.dev")||{}).textContent||"")).join("\n")`, node+" devices 2/4")
	waitPageWithin(t, time.Minute, page, "usage marked on the trainer's node's bars",
		`document.querySelectorAll('.node[data-node="`+node+`"] .bar b.use').length`, "2")
	shot(t, page, "ui-devices")
}

// uiGet is GET path of the UI whose URL is base, with its token.
func uiGet(t testing.TB, base, path string) []byte {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + u.Host + path + "?" + u.RawQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, body)
	}
	return body
}

// kubesim run --ui shows the run live: its steps and assertions as they
// pass, a page of its cluster while the cluster is there, and at the end
// the outcome and the HTML report, served until Ctrl-C.
func TestRunUI(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "live.yaml")
	writeFile(t, file, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: live
cluster:
  nodeGroups: [{count: 2}]
steps:
- apply:
    resources:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 3
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web, image: nginx}]}
- wait: {pods: {selector: app=web, phase: Running, count: 3}}
- name: a while, to look
  sleep: 20s
- assert:
  - pods: {selector: app=web, count: 3}
`))
	base := serveURL(t, e, "run", file, "--ui")
	page := browser(t, 1400, 900)
	if err := chromedp.Do(page, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`body[data-rendered="true"]`))); err != nil {
		t.Fatal(err)
	}
	// While the sleep runs: the steps before it passed, and the cluster's
	// own page shows its 2 nodes and 3 pods.
	waitPage(t, page, "the sleep running after two steps passed",
		`[...document.querySelectorAll("tr.step")].map(r => r.dataset.status).join(",")`, "passed,passed,running")
	cluster, err := chromedp.Run(page, chromedp.Evaluate[string](`document.querySelector("a.cluster-link").href`))
	if err != nil {
		t.Fatal(err)
	}
	shot(t, page, "ui-run-live")
	clusterPage := browser(t, 1400, 900)
	if err := chromedp.Do(clusterPage, chromedp.Navigate(cluster), chromedp.WaitVisible(chromedp.CSS(`body[data-rendered="true"]`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, clusterPage, "the run's cluster on its page", `document.getElementById("count-nodes").textContent + " " + document.getElementById("count-pods").textContent + " " + document.getElementById("cluster").textContent`, "2 3 ")
	waitPage(t, clusterPage, "its page read-only", `document.getElementById("cluster").textContent`, "(read-only)")

	waitPageWithin(t, 2*time.Minute, page, "the run over, every step and assertion passed",
		`document.getElementById("outcome").textContent + " | " + [...document.querySelectorAll("tr.step, tr.assertion")].map(r => r.dataset.status).join(",")`,
		"run over: every scenario passed | passed,passed,passed,passed,passed")
	shot(t, page, "ui-run-done")
	if hidden, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("report").hidden`)); err != nil || hidden {
		t.Errorf("the report link is hidden (%v)", err)
	}
	if report := string(uiGet(t, base, "/report")); !strings.Contains(report, "live") || !strings.Contains(report, "<html") {
		t.Errorf("the report served: %.300s", report)
	}
}

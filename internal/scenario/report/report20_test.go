package report

import (
	"context"
	"fmt"
	"html"
	"html/template"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// report20Workloads are the twenty workloads of report20, in colour order.
var report20Workloads = []string{
	"frontend", "checkout", "payments-api", "cart", "catalog", "search", "search-indexer", "recommendations", "inventory", "orders",
	"shipping", "notifications", "auth", "user-profile", "reviews", "pricing", "ads", "image-resizer", "email-worker", "analytics-ingest",
}

// report20Node is node i (0-44) of report20: 15 a zone, named as EC2 names them.
func report20Node(i int) string {
	return fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", 32*(i/15)+2*(i%15)+1, (37*i+11)%250+3)
}

// report20Placement is a placement of report20's twenty workloads over
// three zones of 15 nodes: each workload's replicas spread round the
// nodes, the nodes in drained cordoned (their pods evicted, some of
// those Pending), node 44 NotReady.
func report20Placement(drained []int, pending int) *result.Placement {
	pl := &result.Placement{Key: "topology.kubernetes.io/zone"}
	for _, w := range report20Workloads {
		pl.Colors = append(pl.Colors, result.WorkloadID{Name: w})
	}
	gone := map[int]bool{}
	for _, i := range drained {
		gone[i] = true
	}
	nodes := make([]result.NodeMark, 45)
	for i := range nodes {
		nodes[i] = result.NodeMark{Name: report20Node(i), Ready: i != 44, Unschedulable: gone[i]}
	}
	var evicted []result.PodMark
	for w, name := range report20Workloads {
		for j := range 3 + (w*7)%10 {
			p := result.PodMark{Name: fmt.Sprintf("shop/%s-7d9f8c6b5-%c%c%c%c%c", name, 'a'+(w+j)%26, 'k'+j%13, 'b'+(3*j)%20, 'x'+w%3, 'c'+j%17), Workload: w, Phase: "Running"}
			n := (w*5 + j*7) % 45
			if gone[n] {
				p.Phase = "Evicted"
				evicted = append(evicted, p)
				if len(pl.Pending) < pending {
					p.Phase = "Pending"
					pl.Pending = append(pl.Pending, p)
				}
				continue
			}
			if j%11 == 4 {
				p.Phase = "ContainerCreating"
			}
			nodes[n].Pods = append(nodes[n].Pods, p)
		}
	}
	pl.Evicted = evicted
	for z, zone := range []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"} {
		pl.Domains = append(pl.Domains, result.Domain{Value: zone, Nodes: nodes[15*z : 15*z+15]})
	}
	return pl
}

// report20 is a realistic large run: twenty workloads over three zones
// of 15 nodes with EC2-style names, pods Pending and evicted, steps with
// long names, a drain with waves, a failed assertion, and an HPA still
// scaling out (5 of 8 desired) when the run ended.
func report20() []*result.Scenario {
	s := func(start, took float64, name, action string) *result.Step {
		return &result.Step{Name: name, Action: action, Start: time.Duration(start * float64(time.Second)), Duration: time.Duration(took * float64(time.Second))}
	}
	steps := []*result.Step{
		s(8, 2.1, "apply the twenty shop workloads with their budgets, spread constraints and priority classes", "apply"),
		s(10.1, 24.4, "wait until every workload has all its replicas Running and Ready in all three zones", "wait"),
		s(34.5, 0.3, "assert that no zone holds more than half of any workload's replicas after the rollout", "assert"),
		s(34.8, 0.1, "raise the checkout service's CPU to 300m per container so that its autoscaler scales out", "usage"),
		s(35, 118, "drain the old pool two nodes at a time while the checkout service keeps its budget", "drain"),
		s(153, 60, "wait for the evicted pods to come back on the new pool's nodes in their own zone", "wait"),
		s(213, 0.4, "assert that the search indexer's pods are still spread evenly across the three zones", "assert"),
		s(213.4, 80, "sleep a while to let the autoscaler catch up with the load on the checkout service", "sleep"),
	}
	for i, st := range steps {
		st.Line = 12 + 9*i
	}
	steps[0].Detail = "20 objects applied"
	steps[1].Check, steps[1].Detail, steps[1].Placement = true, "pods (all) Running ready = 150", report20Placement(nil, 0)
	steps[2].Detail, steps[2].Placement = "1/1 passed", report20Placement(nil, 0)
	steps[2].Assertions = []result.Outcome{{Name: "no zone has more than half of a workload", Passed: true}}
	steps[3].Detail = "pods app=checkout in shop: cpu 300m per container"
	drained := []int{0, 1, 15, 16}
	steps[4].Detail, steps[4].Placement = "24 evicted, 2 refused for a while", report20Placement(drained, 5)
	steps[4].Drain = &result.Drain{Planned: 2, Waves: []result.Wave{
		{Nodes: []string{report20Node(0), report20Node(1)}, Evicted: []string{"shop/checkout-7d9f8c6b5-bkbxc", "shop/cart-7d9f8c6b5-dkbzc"}, Duration: 61 * time.Second,
			Refusals: []result.Refusal{{Pod: "shop/checkout-7d9f8c6b5-bkbxc", PDB: "checkout", For: 41 * time.Second, Evicted: true}}},
		{Nodes: []string{report20Node(15), report20Node(16)}, Evicted: []string{"shop/search-7d9f8c6b5-fkbzc"}, Duration: 57 * time.Second},
	}}
	for _, p := range steps[4].Placement.Pending {
		steps[4].Drain.Pending = append(steps[4].Drain.Pending, result.PendingPod{Pod: p.Name,
			Reason: "0/45 nodes are available: 4 node(s) were unschedulable, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 40 Insufficient cpu."})
	}
	steps[5].Check, steps[5].Detail, steps[5].Placement = true, "pods (all) Running ready = 150", report20Placement(drained, 5)
	steps[5].Error = "timed out after 1m0s: pods (all) Running ready: 145, want 150"
	steps[6].Detail, steps[6].Placement = "0/1 passed", report20Placement(drained, 5)
	steps[6].Assertions = []result.Outcome{{Name: "search-indexer spread within one replica of even", Expected: "max skew 1 over topology.kubernetes.io/zone", Actual: "eu-west-1a 1, eu-west-1b 3, eu-west-1c 4 (skew 3)"}}
	hpa := &result.Autoscaler{Name: "shop/checkout", Metric: "cpu utilisation %", Target: 60, MinReplicas: 3, MaxReplicas: 10}
	for _, x := range []struct {
		at               float64
		current, desired int32
		metric           float64
	}{
		{12, 3, 3, -1}, {30, 3, 3, 22}, {50, 3, 6, 140}, {66, 6, 6, 110}, {110, 6, 6, 96}, {140, 6, 8, 102}, {170, 5, 8, 125}, {250, 5, 8, 131},
	} {
		smp := result.AutoscalerSample{At: time.Duration(x.at * float64(time.Second)), CurrentReplicas: x.current, DesiredReplicas: x.desired}
		if x.metric >= 0 {
			smp.Metric = ptrTo(x.metric)
		}
		hpa.Samples = append(hpa.Samples, smp)
	}
	return []*result.Scenario{{Name: "shop-upgrade-rehearsal", File: "examples/shop-upgrade-rehearsal.yaml", Duration: 296 * time.Second,
		Steps: steps, Autoscalers: []*result.Autoscaler{hpa}}}
}

// TestWriteReport20 writes report20's HTML to $KUBESIM_REPORT20 (a file
// name) to look at in a browser; without it, it checks the page renders.
func TestWriteReport20(t *testing.T) {
	page := writeHTML(t, report20())
	out := os.Getenv("KUBESIM_REPORT20")
	if out == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// The timeline shows each step's name whole: its label wraps rather
// than cut it, and each bar is in a track of its own beside the label.
func TestTimelineShowsWholeStepNames(t *testing.T) {
	page := writeHTML(t, report20())
	for _, s := range report20()[0].Steps {
		want := `<span class="lbl">` + template.HTMLEscapeString(s.Name) + ` <small>`
		if !strings.Contains(page, want) {
			t.Errorf("the timeline lacks %q", want)
		}
	}
	css := page[strings.Index(page, "<style>"):strings.Index(page, "</style>")]
	for _, rule := range regexp.MustCompile(`[^{}]*\.lbl[^{}]*\{([^}]*)\}`).FindAllStringSubmatch(css, -1) {
		for _, cut := range []string{"nowrap", "overflow:hidden", "text-overflow", "height:"} {
			if strings.Contains(rule[1], cut) && !strings.Contains(rule[1], "line-height:") {
				t.Errorf("a step's label is cut (%s): %s", cut, strings.TrimSpace(rule[0]))
			}
		}
	}
	if n := strings.Count(page, `<span class="track"><span class="bar" style="left:`); n != len(report20()[0].Steps) {
		t.Errorf("%d bars in tracks, want one a step", n)
	}
}

// An HPA still scaling when the run ended says so at the chart's right
// end; its time axis runs to the run's end, which it labels; an HPA that
// settled says nothing of the kind.
func TestHPAChartSaysItIsStillScaling(t *testing.T) {
	page := writeHTML(t, report20())
	for _, want := range []string{
		`class="unsettled">still scaling at the end: 5 of 8 desired</text>`,
		fmt.Sprintf(`<line x1="%d" x2="%d" y1="`, marginL+plotW-3, marginL+plotW-3),
		fmt.Sprintf(`<text x="%d.0" y="%d" class="tick end">296s end</text>`, marginL+plotW, marginTop+plotH+16),
		// Every series holds its last value to the run's end.
		fmt.Sprintf(`H%d.0" class="current"/>`, marginL+plotW), fmt.Sprintf(`H%d.0" class="desired"/>`, marginL+plotW),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	// Still scaling down, and run ended before its last sample was read
	// (no duration): the axis runs to that sample.
	r := report20()[0]
	a := r.Autoscalers[0]
	a.Samples = append(a.Samples, result.AutoscalerSample{At: 300 * time.Second, CurrentReplicas: 8, DesiredReplicas: 4})
	r.Duration = 0
	page = writeHTML(t, []*result.Scenario{r})
	for _, want := range []string{`still scaling at the end: 8 of 4 desired`, `class="tick end">300s end</text>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	a.Samples[len(a.Samples)-1].CurrentReplicas = 4
	if page := writeHTML(t, []*result.Scenario{r}); strings.Contains(page, "still scaling") || strings.Contains(page, `class="unsettled"`) {
		t.Error("a settled HPA is said to be still scaling")
	}
}

// In Chromium at 1280 pixels wide, report20's page is no wider than the
// window, every picture inside it at its full width (a flex box squeezes
// a wider one, cutting off what does not fit); no step's name is cut; the timeline's
// bars share one track's left edge and width and start right of their
// labels; the HPA's still-scaling label is inside its chart. It needs
// chromium on PATH, and is left out by -short.
func TestReport20LayoutInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH")
	}
	page := strings.Replace(writeHTML(t, report20()), "</body>", report20Measure+"</body>", 1)
	file := filepath.Join(t.TempDir(), "report20.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,2400", "--dump-dom", "file://"+file).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	if !strings.Contains(dom, `data-rendered="true"`) || strings.Contains(dom, `data-script-errors="`) {
		t.Errorf("the report's script did not run cleanly: %.300s", dom)
	}
	m := regexp.MustCompile(`data-layout="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the layout was not measured: %.300s", dom)
	}
	if m[1] != "ok" {
		for _, bad := range strings.Split(html.UnescapeString(m[1]), " | ") {
			t.Error(bad)
		}
	}
}

// report20Measure measures the laid-out page into its data-layout
// attribute: "ok", or what is wrong, " | " between.
const report20Measure = `<script>(function(){
  var d=document.documentElement, w=d.clientWidth, bad=[];
  if(w<1250) bad.push("the window is "+w+"px wide, not 1280px");
  if(d.scrollWidth>w) bad.push("the page is "+d.scrollWidth+"px wide in a window of "+w+"px");
  document.querySelectorAll("svg").forEach(function(s){
    var r=s.getBoundingClientRect(), want=Number(s.getAttribute("width"));
    if(r.right>w+0.5) bad.push("a picture ("+s.getAttribute("class")+") ends at "+Math.round(r.right)+"px, past the window's "+w+"px");
    if(r.width<want-0.5) bad.push("a picture ("+s.getAttribute("class")+") "+want+"px wide is squeezed into "+Math.round(r.width)+"px, its right part cut off");
  });
  var tracks={};
  document.querySelectorAll(".tl").forEach(function(row){
    var l=row.querySelector(".lbl"), b=row.querySelector(".bar");
    if(l.scrollWidth>l.clientWidth+1||l.scrollHeight>l.clientHeight+1) bad.push("step name cut: "+l.textContent);
    var t=b.parentNode.getBoundingClientRect();
    tracks[Math.round(t.left)+"+"+Math.round(t.width)]=1;
    if(b.getBoundingClientRect().left<l.getBoundingClientRect().right-1) bad.push("a bar starts under its label: "+l.textContent);
  });
  if(Object.keys(tracks).length!==1) bad.push("the bars' tracks differ: "+Object.keys(tracks).join(", "));
  document.querySelectorAll("svg.hpachart text, svg.fleetchart text").forEach(function(x){
    var r=x.getBoundingClientRect(), c=x.ownerSVGElement.getBoundingClientRect();
    if(r.left<c.left-0.5||r.right>c.right+0.5) bad.push("chart text out of its chart: "+x.textContent);
  });
  d.setAttribute("data-layout",bad.join(" | ")||"ok");
})();</script>
`

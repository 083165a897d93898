package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kubesim/kubesim/internal/explain"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"svg":      svg,
	"hpaChart": hpaChart,
	"fleet":    fleetSection,
	"queues":   queueSection,
	"join":     func(s []string) string { return strings.Join(s, "; ") },
	"list":     func(s []string) string { return strings.Join(s, ", ") },
	// firstNodes bounds an explanation's table: the most telling rows come first.
	"firstNodes": func(ns []explain.NodeResult) []explain.NodeResult { return ns[:min(len(ns), 30)] },
	"secs":       func(d interface{ Seconds() float64 }) string { return fmt.Sprintf("%.1fs", d.Seconds()) },
	"inc":        func(i int) int { return i + 1 },
	// waveBar is a wave's wall time as a share of the longest wave's.
	"waveBar": func(d *result.Drain, w result.Wave) string {
		var longest float64
		for _, x := range d.Waves {
			longest = max(longest, x.Duration.Seconds())
		}
		return pct(w.Duration.Seconds(), longest)
	},
	// The timeline spans the steps, from the first (the clusters are made before).
	"barLeft": func(r *result.Scenario, s *result.Step) string {
		return pct(s.Start.Seconds()-r.Steps[0].Start.Seconds(), r.Duration.Seconds()-r.Steps[0].Start.Seconds())
	},
	"barWidth": func(r *result.Scenario, s *result.Step) string {
		span := r.Duration.Seconds() - r.Steps[0].Start.Seconds()
		return pct(max(s.Duration.Seconds(), span/200), span)
	},
}).Parse(reportHTML))

func pct(a, b float64) string {
	if b <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2f%%", 100*a/b)
}

// WriteHTML writes one self-contained HTML page (inline CSS, SVG and
// script; nothing fetched) with each scenario's timeline, a chart of each
// HPA's replicas and metric over time, for a cluster with a node
// autoscaler its nodes, Pending pods and cost over time, its assertion
// points as placement pictures, and each failure's expected and actual.
func WriteHTML(w io.Writer, results []*result.Scenario) error {
	return reportTemplate.Execute(w, results)
}

const reportHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kubesim scenarios</title>
<script>window.reportErrors=[];window.addEventListener("error",function(e){window.reportErrors.push(String(e.message));document.documentElement.setAttribute("data-script-errors",window.reportErrors.join("; "));});</script>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:28px}
.pass{color:#2a7a2a}.fail{color:#c0392b}
.timeline{border:1px solid #ddd;padding:4px 8px;margin:8px 0}
.tl{display:flex;align-items:center;padding:2px 0;border-bottom:1px solid #f1f2f4}.tl:last-child{border-bottom:0}
.tl .lbl{flex:0 0 380px;box-sizing:border-box;padding-right:12px;font-size:11px;line-height:14px;overflow-wrap:anywhere}.tl .lbl small{color:#777}
.tl .track{flex:1 1 0;min-width:0;position:relative;height:14px}
.tl .bar{position:absolute;top:1px;height:12px;background:#59a14f;border-radius:2px;min-width:2px}
.tl.failed .bar{background:#e15759}
table.steps{border-collapse:collapse;margin:8px 0}table.steps td,table.steps th{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top}
.step{border:1px solid #ddd;border-radius:6px;margin:10px 0;padding:8px}
.step.failed{border-color:#e15759}
.expect{font-family:monospace;background:#fdf1f0;padding:6px;white-space:pre-wrap}
.placement{display:flex;flex-wrap:wrap;gap:8px;margin:6px 0}.podrow{display:block;margin:4px 0}
svg.domainbox,svg.podrow{max-width:100%;height:auto}.legend .wl{white-space:nowrap}.legend .nsuffix{margin-left:16px;color:#555}
.domain{fill:#f6f7f9;stroke:#c9ced6}.node{fill:#fff;stroke:#8a94a6}.node.cordoned{stroke-dasharray:4 2;fill:#f1f1f1}.node.notready{fill:#fde2e2;stroke:#c0392b}
.dlabel{font-size:12px;font-weight:600}.nlabel{font-size:10px;fill:#444}.count{font-size:10px;text-anchor:end;fill:#888}
.pending{fill-opacity:.15;stroke:#000}.evicted{fill-opacity:.2;stroke:#c0392b;stroke-dasharray:2 2}
.chip{display:inline-block;width:10px;height:10px;border-radius:5px;margin:0 4px 0 10px}
.legend{font-size:12px;margin:4px 0}
button.toggle{font-size:12px}
details.why{margin:4px 0;font-size:12px}details.why summary{cursor:pointer}
.drain{margin:6px 0}table.waves td{font-size:13px}.refusal.still{color:#c0392b}.none{color:#888}
td.wall{min-width:90px}.wbar{height:6px;background:#4e79a7;border-radius:2px;margin:4px 0 2px}
table.pendingpods td{font-size:12px}
figure.hpa{margin:10px 0}figure.hpa figcaption{font-size:13px;margin-bottom:2px}
.hpachart .plot{fill:#fbfbfc;stroke:#c9ced6}.hpachart .grid{stroke:#eceef2}
.hpachart .tick{font-size:10px;fill:#555}.hpachart .tick.l{text-anchor:end}.hpachart .tick.c{text-anchor:middle}.hpachart .tick.end{text-anchor:end;font-weight:600;fill:#333}
.hpachart .axis{font-size:11px;font-weight:600;fill:#333}.hpachart .axis.r{text-anchor:end}
.hpachart path{fill:none}.hpachart path.current,.hpachart line.current{stroke:#4e79a7;stroke-width:2.5}
.hpachart path.desired,.hpachart line.desired{stroke:#f28e2b;stroke-width:2;stroke-dasharray:6 3}
.hpachart path.metric,.hpachart line.metric{stroke:#59a14f;stroke-width:2}
.hpachart line.target{stroke:#59a14f;stroke-width:1;stroke-dasharray:2 3}.hpachart text.target{font-size:10px;fill:#3d7a36;text-anchor:end}.hpachart text.target.l{text-anchor:start}
.hpachart text{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.hpachart text.legend,.hpachart .tick{stroke:none}
.hpachart line.unsettled{stroke:#c0392b;stroke-width:3}.hpachart text.unsettled{font-size:11px;font-weight:600;fill:#c0392b;text-anchor:end}
.hpachart line.usage{stroke:#b07aa1;stroke-width:1.5;stroke-dasharray:4 3}.hpachart text.usage{font-size:10px;fill:#7a4c70}
.hpachart .sample{fill:#4e79a7}.hpachart .legend{font-size:11px;fill:#333}
div.fleet{margin:10px 0}div.fleet h3{font-size:15px;margin:14px 0 4px}figure.fleet{margin:6px 0}figure.fleet figcaption{font-size:13px;margin-bottom:2px}
table.fleettable td,table.startup td{font-size:13px}
.fleetchart .plot{fill:#fbfbfc;stroke:#c9ced6}.fleetchart .grid{stroke:#eceef2}
.fleetchart .tick{font-size:10px;fill:#555}.fleetchart .tick.l{text-anchor:end}.fleetchart .tick.c{text-anchor:middle}.fleetchart .tick.end{text-anchor:end;font-weight:600;fill:#333}
.fleetchart .axis{font-size:11px;font-weight:600;fill:#333}
.fleetchart path.series{fill:none;stroke-width:2.2}.fleetchart line.series{stroke-width:2.2}.fleetchart .dashed{stroke-width:1.6;stroke-dasharray:5 3}
.fleetchart line.mark{stroke:#b07aa1;stroke-width:1.2;stroke-dasharray:4 3}.fleetchart text.mark{font-size:10px;fill:#7a4c70;paint-order:stroke;stroke:#fff;stroke-width:3px}
.fleetchart .legend{font-size:11px;fill:#333}
</style></head>
<body>
<h1>kubesim scenarios</h1>
<p id="summary"></p>
{{range $r := .}}
<section class="scenario" data-passed="{{$r.Passed}}">
<h2>{{if $r.Passed}}<span class="pass">✓</span>{{else}}<span class="fail">✗</span>{{end}} {{$r.Name}} <small>({{$r.File}}, {{secs $r.Duration}})</small></h2>
{{if $r.Setup}}<div class="expect">clusters: {{$r.Setup}}</div>{{end}}
{{if $r.Steps}}<div><small>clusters ready after {{secs (index $r.Steps 0).Start}}; the steps:</small></div>{{end}}
<div class="timeline">{{range $s := $r.Steps}}<div class="tl{{if $s.Failed}} failed{{end}}"><span class="lbl">{{$s.Name}} <small>{{secs $s.Duration}}</small></span><span class="track"><span class="bar" style="left:{{barLeft $r $s}};width:{{barWidth $r $s}}" title="at {{secs $s.Start}}, took {{secs $s.Duration}}"></span></span></div>{{end}}</div>
{{range $a := $r.Autoscalers}}{{hpaChart $r $a}}{{end}}
{{fleet $r}}
{{queues $r}}
<button class="toggle" type="button">show only failures</button>
{{range $s := $r.Steps}}{{if or $s.Placement $s.Assertions $s.Error $s.Drain}}
<div class="step{{if $s.Failed}} failed{{end}}">
<b>{{if $s.Failed}}<span class="fail">✗</span>{{else}}<span class="pass">✓</span>{{end}} {{$s.Name}}</b> <small>line {{$s.Line}},{{if $s.Cluster}} cluster {{$s.Cluster}},{{end}} at {{secs $s.Start}}, took {{secs $s.Duration}}</small>
{{with or $s.Detail $s.Output}}<div><small>{{.}}</small></div>{{end}}
{{if $s.Error}}<div class="expect">{{$s.Error}}</div>{{end}}
{{range $a := $s.Assertions}}<div>{{if $a.Passed}}<span class="pass">✓</span>{{else}}<span class="fail">✗</span>{{end}} {{$a.Name}}
{{if not $a.Passed}}<div class="expect">expected: {{$a.Expected}}
actual:   {{$a.Actual}}</div>{{end}}</div>{{end}}
{{with $d := $s.Drain}}<div class="drain">
{{with $d.Surge}}<div>surge: node group <b>{{or .NodeGroup "(unnamed)"}}</b> +{{len .Nodes}} ({{list .Nodes}}), Ready after {{secs .Duration}}</div>{{end}}
{{if $d.Waves}}<table class="steps waves"><tr><th>wave</th><th>nodes</th><th>evicted</th><th>refused for a while: pod, budget, how long</th><th>wall time</th></tr>
{{range $i, $w := $d.Waves}}<tr><td>{{inc $i}}/{{$d.Planned}}</td><td>{{list $w.Nodes}}</td>
<td>{{if $w.Evicted}}<details><summary>{{len $w.Evicted}}</summary><small>{{list $w.Evicted}}</small></details>{{else}}0{{end}}</td>
<td>{{range $x := $w.Refusals}}<div class="refusal{{if not $x.Evicted}} still{{end}}"><b>{{$x.Pod}}</b> by {{if $x.PDB}}PDB <b>{{$x.PDB}}</b>{{else}}<i>{{$x.Message}}</i>{{end}}{{if $x.For}} for <b>{{secs $x.For}}</b>{{end}}, {{if $x.Evicted}}then evicted{{else}}still refused at the end{{end}}</div>{{else}}<span class="none">none</span>{{end}}</td>
<td class="wall"><div class="wbar" style="width:{{waveBar $d $w}}"></div>{{secs $w.Duration}}</td></tr>{{end}}</table>{{end}}
{{if $d.Pending}}<div><b>left Pending ({{len $d.Pending}})</b>, with the scheduler's reasons:</div>
<table class="steps pendingpods"><tr><th>pod</th><th>why</th></tr>{{range $p := $d.Pending}}<tr><td>{{$p.Pod}}</td><td>{{$p.Reason}}</td></tr>{{end}}</table>{{else}}<div><small>no pod left Pending</small></div>{{end}}
</div>{{end}}
{{svg $s.Placement}}
{{range $x := $s.Explanations}}<details class="why"><summary>why <b>{{$x.Name}}</b> is {{$x.Result}}: {{$x.Message}}</summary>
<table class="steps"><tr><th>node</th><th>filter</th><th>plugin: reason</th></tr>{{range $n := firstNodes $x.Nodes}}<tr><td>{{$n.Name}}</td><td>{{$n.Filter}}</td><td>{{$n.Plugin}}{{if $n.Reasons}}: {{join $n.Reasons}}{{end}}</td></tr>{{end}}</table>{{if gt (len $x.Nodes) 30}}<small>… and {{len $x.Nodes}} nodes in all: kubesim explain pod {{$x.Name}} -n {{$x.Namespace}} --all</small>{{end}}</details>{{end}}
</div>{{end}}{{end}}
</section>
{{end}}
<script>
(function(){
  var all=document.querySelectorAll("section.scenario"), failed=0;
  all.forEach(function(s){ if(s.getAttribute("data-passed")!=="true") failed++; });
  document.getElementById("summary").textContent=(all.length-failed)+" of "+all.length+" scenarios passed";
  document.querySelectorAll("button.toggle").forEach(function(b){
    b.addEventListener("click",function(){
      var only=b.textContent.indexOf("only")>=0;
      b.parentNode.querySelectorAll(".step").forEach(function(d){ if(!d.classList.contains("failed")) d.style.display=only?"none":""; });
      b.textContent=only?"show all steps":"show only failures";
    });
  });
  document.documentElement.setAttribute("data-rendered","true");
})();
</script>
</body></html>
`

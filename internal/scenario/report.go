package scenario

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"strings"

	"github.com/kubesim/kubesim/internal/explain"
)

// palette colours workloads, in order of first appearance.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

func colour(i int) string {
	if i < 0 {
		return "#999"
	}
	return palette[i%len(palette)]
}

// svg draws a placement: a box per topology domain (side by side,
// wrapping), in it a box per node, in that a dot per pod in its workload's
// colour (outlined when not Running); pending pods in a row of their own,
// hollow; evicted ones dashed. Node boxes: dashed when cordoned or
// tainted, red when NotReady.
func svg(pl *Placement) template.HTML {
	if pl == nil {
		return ""
	}
	const nodeW, nodeH, dot, perRow = 120, 74, 12, 8
	var b strings.Builder
	b.WriteString(`<div class="placement">`)
	for _, d := range pl.Domains {
		width := 12 + len(d.Nodes)*(nodeW+8)
		label := d.Value
		if pl.Key != "" {
			label = pl.Key + "=" + d.Value
		}
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="domainbox"><rect x="1" y="1" width="%d" height="%d" rx="6" class="domain"/>`,
			max(width, 7*len(label)+20)+2, nodeH+32, max(width, 7*len(label)+20), nodeH+30)
		fmt.Fprintf(&b, `<text x="8" y="15" class="dlabel">%s</text>`, html.EscapeString(label))
		x := 8
		for _, n := range d.Nodes {
			cls := "node"
			if n.Unschedulable || n.Tainted {
				cls += " cordoned"
			}
			if !n.Ready {
				cls += " notready"
			}
			fmt.Fprintf(&b, `<g transform="translate(%d,22)"><rect width="%d" height="%d" rx="4" class="%s"><title>%s</title></rect>`, x, nodeW, nodeH, cls, html.EscapeString(n.Name))
			fmt.Fprintf(&b, `<text x="4" y="12" class="nlabel">%s</text>`, html.EscapeString(short(n.Name)))
			for i, p := range n.Pods {
				cx, cy := 10+(i%perRow)*14, 26+(i/perRow)*14
				if cy > nodeH-6 {
					break
				}
				stroke := "none"
				if p.Phase != "Running" {
					stroke = "#000"
				}
				fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%d" fill="%s" stroke="%s"><title>%s %s (%s)</title></circle>`, cx, cy, dot/2, colour(p.Workload), stroke,
					html.EscapeString(p.Name), html.EscapeString(pl.Colors[p.Workload].Name), p.Phase)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" class="count">%d</text></g>`, nodeW-4, nodeH-4, len(n.Pods))
			x += nodeW + 8
		}
		b.WriteString("</svg>")
	}
	b.WriteString("</div>")
	row := func(title string, pods []PodMark, cls string) {
		if len(pods) == 0 {
			return
		}
		rows := (len(pods)-1)/40 + 1
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="podrow"><text x="2" y="13" class="dlabel">%s (%d)</text>`,
			130+min(len(pods), 40)*14, rows*14+6, title, len(pods))
		for i, p := range pods {
			fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%d" fill="%s" class="%s"><title>%s</title></circle>`, 130+(i%40)*14, 9+(i/40)*14, dot/2, colour(p.Workload), cls, html.EscapeString(p.Name))
		}
		b.WriteString("</svg>")
	}
	row("pending", pl.Pending, "pending")
	row("evicted so far", pl.Evicted, "evicted")
	b.WriteString(`<div class="legend">`)
	for i, c := range pl.Colors {
		fmt.Fprintf(&b, `<span class="chip" style="background:%s"></span>%s `, colour(i), html.EscapeString(c.Name))
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

// short keeps a node name readable in its box.
func short(name string) string {
	if len(name) > 17 {
		return name[:8] + "…" + name[len(name)-7:]
	}
	return name
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"svg":  svg,
	"join": func(s []string) string { return strings.Join(s, "; ") },
	// firstNodes bounds an explanation's table: the most telling rows come first.
	"firstNodes": func(ns []explain.NodeResult) []explain.NodeResult { return ns[:min(len(ns), 30)] },
	"secs":       func(d interface{ Seconds() float64 }) string { return fmt.Sprintf("%.1fs", d.Seconds()) },
	// The timeline spans the steps, from the first (the clusters are made before).
	"barLeft": func(r *Result, s *StepResult) string {
		return pct(s.Start.Seconds()-r.Steps[0].Start.Seconds(), r.Duration.Seconds()-r.Steps[0].Start.Seconds())
	},
	"barWidth": func(r *Result, s *StepResult) string {
		span := r.Duration.Seconds() - r.Steps[0].Start.Seconds()
		return pct(max(s.Duration.Seconds(), span/200), span)
	},
	"failed": func(s *StepResult) bool {
		if s.Error != "" {
			return true
		}
		for _, a := range s.Assertions {
			if !a.Passed {
				return true
			}
		}
		return false
	},
}).Parse(reportHTML))

func pct(a, b float64) string {
	if b <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2f%%", 100*a/b)
}

// WriteReport writes one self-contained HTML page (inline CSS, SVG and
// script; nothing fetched) with each scenario's timeline, its assertion
// points as placement pictures, and each failure's expected and actual.
func WriteReport(w io.Writer, results []*Result) error {
	return reportTemplate.Execute(w, results)
}

const reportHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kubesim scenarios</title>
<script>window.reportErrors=[];window.addEventListener("error",function(e){window.reportErrors.push(String(e.message));document.documentElement.setAttribute("data-script-errors",window.reportErrors.join("; "));});</script>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:28px}
.pass{color:#2a7a2a}.fail{color:#c0392b}
.timeline{position:relative;height:auto;border:1px solid #ddd;padding:4px;margin:8px 0}
.tl{position:relative;height:18px;margin:2px 0}
.tl .bar{position:absolute;top:3px;height:12px;background:#59a14f;border-radius:2px;min-width:2px}
.tl.failed .bar{background:#e15759}
.tl .bar{margin-left:260px}.tl{margin-right:270px}
.tl .lbl{position:absolute;left:0;width:255px;overflow:hidden;font-size:11px;white-space:nowrap;z-index:1;background:rgba(255,255,255,.7)}
table.steps{border-collapse:collapse;margin:8px 0}table.steps td,table.steps th{border-bottom:1px solid #eee;padding:3px 8px;text-align:left;vertical-align:top}
.step{border:1px solid #ddd;border-radius:6px;margin:10px 0;padding:8px}
.step.failed{border-color:#e15759}
.expect{font-family:monospace;background:#fdf1f0;padding:6px;white-space:pre-wrap}
.placement{display:flex;flex-wrap:wrap;gap:8px;margin:6px 0}.podrow{display:block;margin:4px 0}
.domain{fill:#f6f7f9;stroke:#c9ced6}.node{fill:#fff;stroke:#8a94a6}.node.cordoned{stroke-dasharray:4 2;fill:#f1f1f1}.node.notready{fill:#fde2e2;stroke:#c0392b}
.dlabel{font-size:12px;font-weight:600}.nlabel{font-size:10px;fill:#444}.count{font-size:10px;text-anchor:end;fill:#888}
.pending{fill-opacity:.15;stroke:#000}.evicted{fill-opacity:.2;stroke:#c0392b;stroke-dasharray:2 2}
.chip{display:inline-block;width:10px;height:10px;border-radius:5px;margin:0 4px 0 10px}
.legend{font-size:12px;margin:4px 0}
button.toggle{font-size:12px}
details.why{margin:4px 0;font-size:12px}details.why summary{cursor:pointer}
</style></head>
<body>
<h1>kubesim scenarios</h1>
<p id="summary"></p>
{{range $r := .}}
<section class="scenario" data-passed="{{$r.Passed}}">
<h2>{{if $r.Passed}}<span class="pass">✓</span>{{else}}<span class="fail">✗</span>{{end}} {{$r.Name}} <small>({{$r.File}}, {{secs $r.Duration}})</small></h2>
{{if $r.Setup}}<div class="expect">clusters: {{$r.Setup}}</div>{{end}}
{{if $r.Steps}}<div><small>clusters ready after {{secs (index $r.Steps 0).Start}}; the steps:</small></div>{{end}}
<div class="timeline">{{range $s := $r.Steps}}<div class="tl{{if failed $s}} failed{{end}}"><span class="lbl">{{$s.Name}} {{secs $s.Duration}}</span><div class="bar" style="left:{{barLeft $r $s}};width:{{barWidth $r $s}}"></div></div>{{end}}</div>
<button class="toggle" type="button">show only failures</button>
{{range $s := $r.Steps}}{{if or $s.Placement $s.Assertions $s.Error}}
<div class="step{{if failed $s}} failed{{end}}">
<b>{{if failed $s}}<span class="fail">✗</span>{{else}}<span class="pass">✓</span>{{end}} {{$s.Name}}</b> <small>line {{$s.Line}},{{if $s.Cluster}} cluster {{$s.Cluster}},{{end}} at {{secs $s.Start}}, took {{secs $s.Duration}}</small>
{{if $s.Detail}}<div><small>{{$s.Detail}}</small></div>{{end}}
{{if $s.Error}}<div class="expect">{{$s.Error}}</div>{{end}}
{{range $a := $s.Assertions}}<div>{{if $a.Passed}}<span class="pass">✓</span>{{else}}<span class="fail">✗</span>{{end}} {{$a.Name}}
{{if not $a.Passed}}<div class="expect">expected: {{$a.Expected}}
actual:   {{$a.Actual}}</div>{{end}}</div>{{end}}
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

package report

import (
	"fmt"
	"html"
	"html/template"
	"strings"

	"github.com/kubesim/kubesim/internal/scenario/result"
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
func svg(pl *result.Placement) template.HTML {
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
			fmt.Fprintf(&b, `<g transform="translate(%d,22)"><rect width="%d" height="%d" rx="4" class="%s"><title>%s</title></rect>`, x, nodeW, nodeH, cls, html.EscapeString(strings.TrimSuffix(n.Name+": devices in use "+n.DevicesText(), ": devices in use ")))
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
	row := func(title string, pods []result.PodMark, cls string) {
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

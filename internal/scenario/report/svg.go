package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// palette colours workloads, in order of first appearance: Tableau's
// ten, then ten more that stay apart from those and from each other
// (CIEDE2000 distance at least 15) and show on white.
var palette = []string{
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#00a8e8", "#a8c020", "#8c1c13", "#6a2cc9", "#0b6e4f", "#1d3a6e", "#e6198a", "#5c3d1e", "#5f5f5f", "#c7b6f0",
}

// colour is workload i's: the palette's, then, past it, hues a golden
// angle apart in three lightnesses, so no two workloads share one.
func colour(i int) string {
	switch {
	case i < 0:
		return "#999"
	case i < len(palette):
		return palette[i]
	}
	j := i - len(palette)
	return fmt.Sprintf("hsl(%.1f,%d%%,%d%%)", math.Mod(20+137.508*float64(j), 360), 70-10*(j%2), []int{45, 62, 32}[j%3])
}

// Placement geometry: a node's box, and the most a topology domain's box
// is wide, so that it fits a 1280-pixel window beside the page's margins
// (narrower windows scale it down).
const (
	nodeW, nodeH, nodeGap = 120, 74, 8
	maxDomainW            = 1180
)

// svg draws a placement: a box per topology domain (side by side,
// wrapping), in it a box per node (in rows that fit the page), in that a
// dot per pod in its workload's colour (outlined when not Running);
// pending pods in a row of their own, hollow; evicted ones dashed. Node
// boxes: dashed when cordoned or tainted, red when NotReady. The domain
// all node names share (".eu-west-1.compute.internal") is said once,
// under the pictures, not in each box.
func svg(pl *result.Placement) template.HTML {
	if pl == nil {
		return ""
	}
	const dot, perRow = 12, 8
	suffix := nodeSuffix(pl)
	var b strings.Builder
	b.WriteString(`<div class="placement">`)
	for _, d := range pl.Domains {
		cols, rows := nodeGrid(len(d.Nodes))
		width := 12 + cols*(nodeW+nodeGap)
		label := d.Value
		if pl.Key != "" {
			label = pl.Key + "=" + d.Value
		}
		w, h := max(width, 7*len(label)+20), 22+rows*(nodeH+nodeGap)
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" class="domainbox"><rect x="1" y="1" width="%d" height="%d" rx="6" class="domain"/>`,
			w+2, h+2, w+2, h+2, w, h)
		fmt.Fprintf(&b, `<text x="8" y="15" class="dlabel">%s</text>`, html.EscapeString(label))
		for k, n := range d.Nodes {
			cls := "node"
			if n.Unschedulable || n.Tainted {
				cls += " cordoned"
			}
			if !n.Ready {
				cls += " notready"
			}
			x, y := 8+(k%cols)*(nodeW+nodeGap), 22+(k/cols)*(nodeH+nodeGap)
			fmt.Fprintf(&b, `<g transform="translate(%d,%d)"><rect width="%d" height="%d" rx="4" class="%s"><title>%s</title></rect>`, x, y, nodeW, nodeH, cls, html.EscapeString(strings.TrimSuffix(n.Name+": devices in use "+n.DevicesText(), ": devices in use ")))
			fmt.Fprintf(&b, `<text x="4" y="12" class="nlabel">%s</text>`, html.EscapeString(short(strings.TrimSuffix(n.Name, suffix))))
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
					html.EscapeString(p.Name), html.EscapeString(workloadName(pl, p.Workload)), p.Phase)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" class="count">%d</text></g>`, nodeW-4, nodeH-4, len(n.Pods))
		}
		b.WriteString("</svg>")
	}
	b.WriteString("</div>")
	row := func(title string, pods []result.PodMark, cls string) {
		if len(pods) == 0 {
			return
		}
		rows := (len(pods)-1)/40 + 1
		w, h := 130+min(len(pods), 40)*14, rows*14+6
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" class="podrow"><text x="2" y="13" class="dlabel">%s (%d)</text>`,
			w, h, w, h, title, len(pods))
		for i, p := range pods {
			fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%d" fill="%s" class="%s"><title>%s</title></circle>`, 130+(i%40)*14, 9+(i/40)*14, dot/2, colour(p.Workload), cls, html.EscapeString(p.Name))
		}
		b.WriteString("</svg>")
	}
	row("pending", pl.Pending, "pending")
	row("evicted so far", pl.Evicted, "evicted")
	b.WriteString(`<div class="legend">`)
	for i, c := range pl.Colors {
		fmt.Fprintf(&b, `<span class="wl"><span class="chip" style="background:%s"></span>%s</span> `, colour(i), html.EscapeString(c.Name))
	}
	if suffix != "" {
		fmt.Fprintf(&b, `<span class="nsuffix">node names end in <b>%s</b></span>`, html.EscapeString(suffix))
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

// nodeGrid is how many columns and rows of node boxes a domain of n nodes
// has: one row if it fits the page, else rows as even as may be.
func nodeGrid(n int) (cols, rows int) {
	most := (maxDomainW - 12) / (nodeW + nodeGap)
	rows = max(1, (n+most-1)/most)
	return max(1, (n+rows-1)/rows), rows
}

// nodeSuffix is the domain all the placement's node names end in
// (".eu-west-1.compute.internal"), from a dot and leaving each some name
// before it; "" when they share none, or there is but one node.
func nodeSuffix(pl *result.Placement) string {
	var names []string
	for _, d := range pl.Domains {
		for _, n := range d.Nodes {
			names = append(names, n.Name)
		}
	}
	if len(names) < 2 {
		return ""
	}
	i := strings.IndexByte(names[0], '.')
	if i <= 0 {
		return ""
	}
	suffix := names[0][i:]
	for _, n := range names[1:] {
		for len(n) <= len(suffix) || !strings.HasSuffix(n, suffix) {
			j := strings.IndexByte(suffix[1:], '.')
			if j < 0 {
				return ""
			}
			suffix = suffix[1+j:]
		}
	}
	return suffix
}

func workloadName(pl *result.Placement, i int) string {
	if i < 0 || i >= len(pl.Colors) {
		return ""
	}
	return pl.Colors[i].Name
}

// short keeps a node name readable in its box.
func short(name string) string {
	if len(name) > 17 {
		return name[:8] + "…" + name[len(name)-7:]
	}
	return name
}

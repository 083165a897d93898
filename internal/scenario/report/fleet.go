package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// Fleet chart geometry: three charts one above the other share the width
// and the time axis of the HPA's.
const (
	fleetPlotH   = 150
	fleetTop     = 28
	legendRowH   = 16
	legendPerRow = 3
	legendColW   = 230
)

// point is a series' value from a moment on (steps), or at it (lines).
type point struct{ sec, v float64 }

type series struct {
	name   string
	colour string
	dashed bool
	line   bool // straight lines between points, not steps
	pts    []point
}

// fleetSection is what a scenario's clusters with a node autoscaler did:
// a table of each NodePool's peak, launches, disruptions (by Karpenter's
// reason), node-hours and cost, one of how long pods waited to run, and
// charts of nodes per NodePool (and those disrupting), Pending pods and
// cost so far over the run. Several clusters share the charts and the
// tables, each in its colour, so that two settings of one workload are
// seen side by side.
func fleetSection(r *result.Scenario) template.HTML {
	if len(r.Fleets) == 0 {
		return ""
	}
	from, to := r.Fleets[0].From.Seconds(), r.Fleets[0].To.Seconds()
	for _, f := range r.Fleets {
		from, to = math.Min(from, f.From.Seconds()), math.Max(to, f.To.Seconds())
	}
	to = math.Max(to, from+1)
	several := len(r.Fleets) > 1
	var b strings.Builder
	b.WriteString(`<div class="fleet"><h3>Nodes, Pending pods and cost</h3>`)
	fleetTables(&b, r.Fleets, several)

	var nodes, pending, cost []series
	k := 0 // series colour
	for _, f := range r.Fleets {
		prefix := ""
		if several {
			prefix = f.Cluster + ": "
		}
		base := colour(k)
		for _, p := range f.Pools() {
			name := p.Name
			if name == "" {
				name = "(no NodePool)"
			}
			var spans []result.Span
			for _, n := range f.Nodes {
				if n.NodePool == p.Name {
					spans = append(spans, n.Lifetime())
				}
			}
			nodes = append(nodes, series{name: prefix + name, colour: colour(k), pts: countSteps(spans, f.From.Seconds(), f.To.Seconds())})
			k++
		}
		var disrupting []result.Span
		for _, n := range f.Nodes {
			disrupting = append(disrupting, n.Disrupting...)
		}
		if len(disrupting) > 0 {
			nodes = append(nodes, series{name: prefix + "disrupting", colour: base, dashed: true, pts: countSteps(disrupting, f.From.Seconds(), f.To.Seconds())})
		}
		pending = append(pending, series{name: prefix + "Pending", colour: base, pts: pendingSteps(f)})
		cost = append(cost, series{name: prefix + "cost", colour: base, line: true, pts: costSoFar(f)})
	}
	marks := scaleMarks(r)
	b.WriteString(timeChart("nodes", "Nodes per NodePool (dashed: being disrupted)", "nodes", from, to, nodes, marks, countTick))
	b.WriteString(timeChart("pending", "Pending pods", "pods", from, to, pending, marks, countTick))
	b.WriteString(timeChart("cost", "Cost so far, at the instance types' catalog prices (not a bill)", "$", from, to, cost, nil, dollarTick))
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

func fleetTables(b *strings.Builder, fleets []*result.Fleet, several bool) {
	cluster := func(f *result.Fleet) string {
		if !several {
			return ""
		}
		return "<td>" + html.EscapeString(f.Cluster) + "</td>"
	}
	head := ""
	if several {
		head = "<th>cluster</th>"
	}
	fmt.Fprintf(b, `<table class="steps fleettable"><tr>%s<th>NodePool</th><th>peak nodes</th><th>launched</th><th>disrupted (why)</th><th>node-hours</th><th>cost</th></tr>`, head)
	for _, f := range fleets {
		for _, p := range f.Pools() {
			name := html.EscapeString(p.Name)
			if p.Name == "" {
				name = "<i>no NodePool</i>"
			}
			why := ""
			if len(p.Reasons) > 0 {
				why = " <small>(" + html.EscapeString(p.ReasonsText()) + ")</small>"
			}
			price := fmt.Sprintf("$%.2f", p.Usage.Cost)
			if p.Usage.Unpriced == p.Usage.Nodes && p.Usage.Nodes > 0 {
				price = `<span class="none">no price</span>`
			}
			fmt.Fprintf(b, `<tr>%s<td>%s</td><td>%d</td><td>%d</td><td>%d%s</td><td>%.2f</td><td>%s</td></tr>`,
				cluster(f), name, p.Peak, p.Launched, p.Disrupted, why, p.Usage.NodeHours, price)
		}
	}
	b.WriteString(`</table>`)
	fmt.Fprintf(b, `<table class="steps startup"><tr>%s<th>Pending→Running</th><th>median</th><th>p95</th><th>max</th></tr>`, head)
	for _, f := range fleets {
		if len(f.Startup) == 0 {
			fmt.Fprintf(b, `<tr>%s<td colspan="4" class="none">no pod waited</td></tr>`, cluster(f))
			continue
		}
		med, p95, most := result.Quantiles(f.Startup)
		fmt.Fprintf(b, `<tr>%s<td>%d pods</td><td>%s</td><td>%s</td><td>%s</td></tr>`, cluster(f), len(f.Startup),
			secsText(med.Seconds()), secsText(p95.Seconds()), secsText(most.Seconds()))
	}
	b.WriteString(`</table>`)
}

func secsText(s float64) string { return fmt.Sprintf("%.1fs", s) }

// countSteps is how many spans are open from each change on, from from to to.
func countSteps(spans []result.Span, from, to float64) []point {
	type edge struct {
		t float64
		d int
	}
	n := 0
	var edges []edge
	for _, s := range spans {
		a := s.From.Seconds()
		open := s.To == nil || s.To.Seconds() > from
		switch {
		case a <= from && open:
			n++
		case a > from && a <= to:
			edges = append(edges, edge{a, 1})
		}
		if s.To != nil && s.To.Seconds() > from && s.To.Seconds() <= to && (a <= to) {
			edges = append(edges, edge{s.To.Seconds(), -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].t < edges[j].t })
	pts := []point{{from, float64(n)}}
	for i, e := range edges {
		n += e.d
		if i+1 < len(edges) && edges[i+1].t == e.t {
			continue // one point per moment
		}
		pts = append(pts, point{e.t, float64(n)})
	}
	return pts
}

// pendingSteps is the Pending count from from on.
func pendingSteps(f *result.Fleet) []point {
	from, to := f.From.Seconds(), f.To.Seconds()
	pts := []point{{from, 0}}
	for _, c := range f.Pending {
		at := c.At.Seconds()
		switch {
		case at <= from:
			pts[0].v = float64(c.N)
		case at <= to:
			pts = append(pts, point{at, float64(c.N)})
		}
	}
	return pts
}

// costSoFar is what the priced nodes had cost at each change of the
// nodes, and at the end: the price per hour of those there, integrated.
func costSoFar(f *result.Fleet) []point {
	from, to := f.From.Seconds(), f.To.Seconds()
	type edge struct{ t, rate float64 }
	rate := 0.0
	var edges []edge
	for _, n := range f.Nodes {
		if !n.Priced {
			continue
		}
		p := n.PricePerHour / 3600
		a, gone := n.Added.Seconds(), n.Gone
		if gone != nil && gone.Seconds() <= math.Max(a, from) {
			continue
		}
		if a <= from {
			rate += p
		} else if a < to {
			edges = append(edges, edge{a, p})
		}
		if gone != nil && gone.Seconds() < to {
			edges = append(edges, edge{gone.Seconds(), -p})
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].t < edges[j].t })
	pts := []point{{from, 0}}
	at, total := from, 0.0
	for _, e := range edges {
		total += rate * (e.t - at)
		at, rate = e.t, rate+e.rate
		pts = append(pts, point{at, total})
	}
	return append(pts, point{to, total + rate*(to-at)})
}

// stepMark is a step drawn on a chart where it began.
type stepMark struct {
	sec   float64
	label string
}

// scaleMarks are the run's scale steps, which is what drives a fleet.
func scaleMarks(r *result.Scenario) []stepMark {
	var out []stepMark
	for _, s := range r.Steps {
		if s.Action == "scale" {
			label := s.Name
			if s.Cluster != "" && len(r.Fleets) > 1 {
				label = s.Cluster + ": " + label
			}
			out = append(out, stepMark{s.Start.Seconds(), label})
		}
	}
	if len(out) > 12 {
		return nil // more than the chart can label
	}
	return out
}

func countTick(v, _ float64) string { return fmt.Sprintf("%g", v) }

// dollarTick says a value in dollars, to the cent or as finely as the
// axis' step needs ($0.005 apart are not all $0.01).
func dollarTick(v, step float64) string {
	places := 2
	if step > 0 {
		places = max(2, int(math.Ceil(-math.Log10(step)-1e-9)))
	}
	return fmt.Sprintf("$%.*f", places, v)
}

// timeAxis is how a span of seconds is labelled: seconds, minutes or
// hours, whichever reads best.
func timeAxis(span float64) (unit float64, suffix string) {
	switch {
	case span <= 300:
		return 1, "s"
	case span <= 3*3600:
		return 60, "m"
	}
	return 3600, "h"
}

// timeChart draws series against the run's seconds: steps (a value holds
// until the next) or lines, marks where steps began, and a legend under
// the axis. The values are in data-series too ("name=sec:value …;…"),
// for tests and tools.
func timeChart(class, caption, unit string, from, to float64, ss []series, marks []stepMark, tick func(v, step float64) string) string {
	top := 0.0
	for _, s := range ss {
		for _, p := range s.pts {
			top = math.Max(top, p.v)
		}
	}
	yStep := niceCeil(top / 4)
	if class != "cost" {
		yStep = math.Max(1, math.Ceil(yStep)) // whole nodes and pods
	}
	yMax := yStep * math.Max(1, math.Ceil(top*1.15/yStep))
	legendRows := (len(ss) + legendPerRow - 1) / legendPerRow
	height := fleetTop + fleetPlotH + 30 + legendRows*legendRowH
	x := func(sec float64) float64 { return marginL + plotW*(math.Max(sec, from)-from)/(to-from) }
	y := func(v float64) float64 { return fleetTop + fleetPlotH*(1-v/yMax) }

	var b, data strings.Builder
	for i, s := range ss {
		if i > 0 {
			data.WriteByte(';')
		}
		data.WriteString(s.name + "=")
		for j, p := range s.pts {
			if j > 0 {
				data.WriteByte(' ')
			}
			fmt.Fprintf(&data, "%.1f:%g", p.sec, math.Round(p.v*10000)/10000)
		}
	}
	fmt.Fprintf(&b, `<figure class="fleet"><figcaption>%s</figcaption>`, html.EscapeString(caption))
	// fleet-pending, not pending: the placement pictures style .pending.
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="fleetchart fleet-%s" data-series="%s">`,
		chartW, height, class, html.EscapeString(data.String()))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="plot"/>`, marginL, fleetTop, plotW, fleetPlotH)
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick l">%s</text>`,
			marginL, marginL+plotW, y(v), y(v), marginL-6, y(v)+4, tick(v, yStep))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis">%s</text>`, marginL-40, fleetTop-10, html.EscapeString(unit))

	writeTimeTicks(&b, from, to, x, fleetTop+fleetPlotH+16)

	// Marks, labels dropping a row rather than run into the one before.
	rowEnd := [3]float64{}
	for _, m := range marks {
		at := x(m.sec)
		row := 0
		for row < 2 && at < rowEnd[row] {
			row++
		}
		rowEnd[row] = at + 6*float64(len(m.label)) + 8
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="mark"><title>%s at %.1fs</title></line><text x="%.1f" y="%d" class="mark">%s</text>`,
			at, at, fleetTop, fleetTop+fleetPlotH, html.EscapeString(m.label), m.sec, at+3, fleetTop+11+11*row, html.EscapeString(m.label))
	}

	for _, s := range ss {
		var d strings.Builder
		for i, p := range s.pts {
			switch {
			case i == 0:
				fmt.Fprintf(&d, "M%.1f,%.1f", x(p.sec), y(p.v))
			case s.line:
				fmt.Fprintf(&d, "L%.1f,%.1f", x(p.sec), y(p.v))
			default:
				fmt.Fprintf(&d, "H%.1fV%.1f", x(p.sec), y(p.v))
			}
		}
		if !s.line {
			fmt.Fprintf(&d, "H%.1f", x(to))
		}
		cls := "series"
		if s.dashed {
			cls += " dashed"
		}
		last := s.pts[len(s.pts)-1]
		fmt.Fprintf(&b, `<path d="%s" class="%s" stroke="%s"><title>%s: %s at the end</title></path>`,
			d.String(), cls, s.colour, html.EscapeString(s.name), tick(last.v, yStep/100))
	}

	ly := fleetTop + fleetPlotH + 36
	for i, s := range ss {
		lx, row := marginL+(i%legendPerRow)*legendColW, i/legendPerRow
		cls := "series"
		if s.dashed {
			cls += " dashed"
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" class="%s" stroke="%s"/><text x="%d" y="%d" class="legend">%s</text>`,
			lx, lx+24, ly-4+row*legendRowH, ly-4+row*legendRowH, cls, s.colour, lx+30, ly+row*legendRowH, html.EscapeString(s.name))
	}
	b.WriteString(`</svg></figure>`)
	return b.String()
}

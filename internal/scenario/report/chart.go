package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// Chart geometry: the plot area inside the margins that hold the axes.
const (
	chartW, chartH                           = 760, 300
	marginL, marginR, marginTop, marginBelow = 46, 62, 40, 52
	plotW, plotH                             = chartW - marginL - marginR, chartH - marginTop - marginBelow
)

// hpaChart draws an HPA's current and desired replicas (left axis) and its
// metric with its target (right axis) against the seconds of the run, as
// steps: a value holds until the next sample. The usage steps of its
// cluster are marked where they ran. The samples are in data-samples too
// ("seconds:current/desired:metric;…", "-" for no metric), for tests and
// tools. The seconds run from the first step to the run's end; an HPA
// still scaling then (current replicas not yet desired) is said to be.
func hpaChart(r *result.Scenario, a *result.Autoscaler) template.HTML {
	if len(a.Samples) == 0 {
		return ""
	}
	from, to := 0.0, r.Duration.Seconds()
	if len(r.Steps) > 0 {
		from = r.Steps[0].Start.Seconds() // the clusters are made before
	}
	to = max(to, a.Samples[len(a.Samples)-1].At.Seconds(), from+1)
	maxReplicas, maxMetric := float64(a.MaxReplicas), a.Target
	for _, s := range a.Samples {
		maxReplicas = max(maxReplicas, float64(s.CurrentReplicas), float64(s.DesiredReplicas))
		if s.Metric != nil {
			maxMetric = max(maxMetric, *s.Metric)
		}
	}
	maxReplicas = math.Max(1, maxReplicas)
	maxMetric = niceCeil(maxMetric * 1.1)
	// Headroom above the most replicas, for the usage steps' labels.
	topReplicas := maxReplicas * 1.25
	x := func(sec float64) float64 { return marginL + plotW*(math.Max(sec, from)-from)/(to-from) }
	yR := func(v float64) float64 { return marginTop + plotH*(1-v/topReplicas) }
	yM := func(v float64) float64 { return marginTop + plotH*(1-v/maxMetric) }

	var b, data strings.Builder
	for i, s := range a.Samples {
		if i > 0 {
			data.WriteByte(';')
		}
		fmt.Fprintf(&data, "%.1f:%d/%d:%s", s.At.Seconds(), s.CurrentReplicas, s.DesiredReplicas, metricText(s.Metric))
	}
	title := a.Name
	if a.Cluster != "" {
		title = a.Cluster + ": " + title
	}
	fmt.Fprintf(&b, `<figure class="hpa"><figcaption>HorizontalPodAutoscaler <b>%s</b>: replicas and %s over time</figcaption>`, html.EscapeString(title), html.EscapeString(a.Metric))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="hpachart" data-hpa="%s" data-samples="%s">`,
		chartW, chartH, html.EscapeString(a.Name), data.String())
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" class="plot"/>`, marginL, marginTop, plotW, plotH)

	// Axes: replicas left, the metric right, seconds below.
	step := math.Max(1, math.Ceil(maxReplicas/8))
	for v := 0.0; v <= maxReplicas; v += step {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick l">%g</text>`,
			marginL, marginL+plotW, yR(v), yR(v), marginL-6, yR(v)+4, v)
	}
	for i := 0; i <= 4; i++ {
		v := maxMetric * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="tick r">%g</text>`, marginL+plotW+6, yM(v)+4, v)
	}
	// The time: round seconds (minutes or hours for a long run: at
	// --time-scale, hours of cluster time), then the run's end at the
	// plot's right edge (the last sample holds until then), the round
	// ones that would run into its label left out.
	writeTimeTicks(&b, from, to, x, marginTop+plotH+16)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis">replicas</text>`, marginL-40, marginTop-10)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="axis r">%s</text>`, marginL+plotW+56, marginTop-10, html.EscapeString(a.Metric))

	// The usage steps of the HPA's cluster, where they began; a label
	// drops a row rather than run into the one before.
	rowEnd := [2]float64{}
	for _, s := range r.Steps {
		if s.Action != "usage" || s.Cluster != a.Cluster {
			continue
		}
		label := s.Detail
		if _, after, ok := strings.Cut(label, ": "); ok {
			label = strings.TrimSuffix(after, " per container")
		}
		at := x(s.Start.Seconds())
		row := 0
		if at < rowEnd[0] {
			row = 1
		}
		rowEnd[row] = at + 6*float64(len(label)) + 8
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="usage"><title>%s at %.1fs: %s</title></line><text x="%.1f" y="%d" class="usage">%s</text>`,
			at, at, marginTop, marginTop+plotH, html.EscapeString(s.Name), s.Start.Seconds(), html.EscapeString(s.Detail),
			at+3, marginTop+12+12*row, html.EscapeString(label))
	}

	// Still scaling when the run ended (the last sample's current replicas
	// short of or past its desired): said at the right end, above the
	// higher of the two lines (below the lower one if there is no room),
	// with a bar spanning the gap.
	last := a.Samples[len(a.Samples)-1]
	unsettled, unsettledY := last.CurrentReplicas != last.DesiredReplicas, 0.0
	if unsettled {
		yc, yd := yR(float64(last.CurrentReplicas)), yR(float64(last.DesiredReplicas))
		unsettledY = math.Min(yc, yd) - 7
		if unsettledY < marginTop+14 {
			unsettledY = math.Max(yc, yd) + 15
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="unsettled"/>`, marginL+plotW-3, marginL+plotW-3, yc, yd)
	}
	if a.Target > 0 {
		// Its label at the right end, or the left if the end is taken there.
		tx, anchor := marginL+plotW-4, ""
		if unsettled && math.Abs(yM(a.Target)-4-unsettledY) < 14 {
			tx, anchor = marginL+4, " l"
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="target"/><text x="%d" y="%.1f" class="target%s">target %g</text>`,
			marginL, marginL+plotW, yM(a.Target), yM(a.Target), tx, yM(a.Target)-4, anchor, a.Target)
	}
	// Each series as steps: the value holds until the next sample.
	path := func(cls string, y func(result.AutoscalerSample) (float64, bool)) {
		var d strings.Builder
		pen := false
		for i, s := range a.Samples {
			v, ok := y(s)
			if !ok {
				pen = false
				continue
			}
			end := to
			if i+1 < len(a.Samples) {
				end = a.Samples[i+1].At.Seconds()
			}
			if pen {
				fmt.Fprintf(&d, "V%.1f", v)
			} else {
				fmt.Fprintf(&d, "M%.1f,%.1f", x(s.At.Seconds()), v)
			}
			fmt.Fprintf(&d, "H%.1f", x(end))
			pen = true
		}
		fmt.Fprintf(&b, `<path d="%s" class="%s"/>`, d.String(), cls)
	}
	path("metric", func(s result.AutoscalerSample) (float64, bool) {
		if s.Metric == nil {
			return 0, false
		}
		return yM(*s.Metric), true
	})
	path("desired", func(s result.AutoscalerSample) (float64, bool) { return yR(float64(s.DesiredReplicas)), true })
	path("current", func(s result.AutoscalerSample) (float64, bool) { return yR(float64(s.CurrentReplicas)), true })
	for _, s := range a.Samples {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" class="sample"><title>%.1fs: %d current, %d desired replicas; %s %s</title></circle>`,
			x(s.At.Seconds()), yR(float64(s.CurrentReplicas)), s.At.Seconds(), s.CurrentReplicas, s.DesiredReplicas, html.EscapeString(a.Metric), metricText(s.Metric))
	}

	if unsettled {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="unsettled">still scaling at the end: %d of %d desired</text>`,
			marginL+plotW-9, unsettledY, last.CurrentReplicas, last.DesiredReplicas)
	}

	// The legend, under the seconds.
	ly := marginTop + plotH + 38
	for i, l := range []struct{ cls, text string }{
		{"current", "current replicas"}, {"desired", "desired replicas"}, {"metric", a.Metric}, {"usage", "usage step"},
	} {
		lx := marginL + i*170
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" class="%s"/><text x="%d" y="%d" class="legend">%s</text>`,
			lx, lx+24, ly-4, ly-4, l.cls, lx+30, ly, html.EscapeString(l.text))
	}
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String())
}

func metricText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%g", math.Round(*v*100)/100)
}

// niceCeil is v rounded up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// writeTimeTicks labels a chart's time axis at baseline y: round seconds
// (minutes or hours for a long run: at --time-scale, hours of cluster
// time), then the run's end at the plot's right edge (the last sample
// holds until then), the round ones that would run into its label left
// out.
func writeTimeTicks(b *strings.Builder, from, to float64, x func(float64) float64, y int) {
	unit, suffix := timeAxis(to - from)
	end := fmt.Sprintf("%g%s end", math.Round(to/unit*10)/10, suffix)
	endAt := x(to) - 6*float64(len(end))
	step := niceCeil((to - from) / unit / 8)
	for s := math.Ceil(from/unit/step) * step; s*unit <= to && x(s*unit)+18 < endAt; s += step {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" class="tick c">%g%s</text>`, x(s*unit), y, s, suffix)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d" class="tick end">%s</text>`, x(to), y, end)
}

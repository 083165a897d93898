package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// queueSection is what Kueue's ClusterQueues did over the run: a table of
// each one's quotas and peaks, then for each two charts over the run —
// its pending and admitted Workloads, and the quota its admitted
// Workloads use, in percent of each nominal quota (past 100: borrowed
// from its cohort).
func queueSection(r *result.Scenario) template.HTML {
	if len(r.Queues) == 0 {
		return ""
	}
	from, to := 0.0, r.Duration.Seconds()
	if len(r.Steps) > 0 {
		from = r.Steps[0].Start.Seconds() // the clusters are made before
	}
	for _, q := range r.Queues {
		if n := len(q.Samples); n > 0 {
			to = math.Max(to, q.Samples[n-1].At.Seconds())
		}
	}
	to = math.Max(to, from+1)
	var b strings.Builder
	b.WriteString(`<div class="fleet queues"><h3>Kueue's ClusterQueues</h3>`)
	queueTable(&b, r.Queues)
	for _, q := range r.Queues {
		if len(q.Samples) == 0 {
			continue
		}
		name := q.Name
		if q.Cluster != "" {
			name = q.Cluster + ": " + name
		}
		var pending, admitted []point
		used := make([][]point, len(q.Quotas))
		for _, s := range q.Samples {
			sec := s.At.Seconds()
			pending = append(pending, point{sec, float64(s.Pending)})
			admitted = append(admitted, point{sec, float64(s.Admitted)})
			for i := range q.Quotas {
				if i < len(s.Used) && q.Quotas[i].Nominal > 0 {
					used[i] = append(used[i], point{sec, 100 * s.Used[i] / q.Quotas[i].Nominal})
				}
			}
		}
		workloads := []series{
			{name: "admitted", colour: colour(0), pts: admitted},
			{name: "pending", colour: colour(1), dashed: true, pts: pending},
		}
		var quota []series
		for i, qu := range q.Quotas {
			if len(used[i]) > 0 {
				quota = append(quota, series{name: fmt.Sprintf("%s of %s (nominal %g)", qu.Resource, qu.Flavor, qu.Nominal), colour: colour(2 + i), pts: used[i]})
			}
		}
		b.WriteString(timeChart("queue-workloads", "ClusterQueue "+name+": Workloads admitted and pending", "workloads", from, to, workloads, nil, countTick))
		if len(quota) > 0 {
			b.WriteString(timeChart("queue-quota", "ClusterQueue "+name+": quota in use by admitted Workloads, % of nominal (over 100: borrowed)", "%", from, to, quota, nil, percentTick))
		}
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

func percentTick(v, _ float64) string { return fmt.Sprintf("%g%%", math.Round(v*10)/10) }

// queueTable lists each ClusterQueue's quotas and the most pending,
// admitted and used at once.
func queueTable(b *strings.Builder, queues []*result.Queue) {
	b.WriteString(`<table class="steps fleettable"><tr><th>ClusterQueue</th><th>cohort</th><th>peak pending</th><th>peak admitted</th><th>most in use, of nominal quota</th></tr>`)
	for _, q := range queues {
		pending, admitted, _ := q.Peaks()
		name := q.Name
		if q.Cluster != "" {
			name = q.Cluster + ": " + name
		}
		fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td></tr>`,
			html.EscapeString(name), html.EscapeString(q.Cohort), pending, admitted, html.EscapeString(q.UseText()))
	}
	b.WriteString(`</table>`)
}

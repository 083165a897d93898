package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestStatusKB(t *testing.T) {
	status := "Name:\tkubesim\nVmRSS:\t  190000 kB\nRssAnon:\t   36000 kB\nRssFile:\t  154000 kB\n"
	if got := statusKB(status, "RssAnon"); got != 36000 {
		t.Errorf("RssAnon = %d, want 36000", got)
	}
	if got := statusKB(status, "Rss"); got != 0 {
		t.Errorf("Rss (no such field) = %d, want 0", got)
	}
}

// The table sets on against off: CPU as a share of one core over the
// window, the cost of serving as usage-metrics' share and the runs'
// difference, top's median and range.
func TestUsageTable(t *testing.T) {
	var b bytes.Buffer
	on := &usageRun{window: time.Minute, clusterCPU: 12 * time.Second, metricsCPU: 1200 * time.Millisecond, rss: 190 << 20, anon: 36 << 20,
		top: []time.Duration{300 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond}}
	off := &usageRun{window: time.Minute, clusterCPU: 11400 * time.Millisecond}
	writeUsageTable(&b, UsageOptions{Size: Size{Nodes: 100, Pods: 1000}, HPAs: 5, Window: time.Minute}, on, off)
	out := b.String()
	for _, want := range []string{
		"100 nodes, 1000 pods, 5 HPAs (sync 15s)",
		"cluster CPU                   20.0 %",
		"19.0 %",
		"usage-metrics CPU             2.0 %",
		"190 MiB (36 MiB)",
		"0.40 s median of 3 (0.30–0.90 s)",
		"serving metrics: usage-metrics is 10.0 % of the cluster's CPU",
		"on against off: 1.0 % of one core more, 5.0 % of the cluster's CPU with it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	p50, p99 := percentiles(ds)
	if p50 != 50*time.Millisecond || p99 != 99*time.Millisecond {
		t.Errorf("p50 %s p99 %s, want 50ms 99ms", p50, p99)
	}
	if p50, p99 := percentiles([]time.Duration{7 * time.Millisecond}); p50 != 7*time.Millisecond || p99 != 7*time.Millisecond {
		t.Errorf("one sample: p50 %s p99 %s", p50, p99)
	}
	if p50, p99 := percentiles(nil); p50 != 0 || p99 != 0 {
		t.Errorf("no sample: p50 %s p99 %s", p50, p99)
	}
}

func TestPrintDPDB(t *testing.T) {
	var b bytes.Buffer
	PrintDPDB(&b, DPDBResult{Pairs: 50, BothWithout: 12, BothWith: 0,
		LatencyWith: []time.Duration{30 * time.Millisecond}, LatencyWithout: []time.Duration{10 * time.Millisecond},
		Lag: []time.Duration{200 * time.Millisecond}})
	for _, want := range []string{"12 of 50 without the webhook, 0 of 50 with it", "lock adds p50 20ms", "p50 200ms p99 200ms over 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

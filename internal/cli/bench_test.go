package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/bench"
)

func TestBenchUsageFlags(t *testing.T) {
	ok := bench.UsageOptions{Size: bench.Size{Nodes: 1000, Pods: 10000}, HPAs: 50, Window: time.Minute, TopRuns: 5}
	if err := checkUsageFlags(&ok); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	for _, tc := range []struct {
		change func(*bench.UsageOptions)
		want   string
	}{
		{func(o *bench.UsageOptions) { o.Size.Pods = 200000 }, "--pods: 200000 is more than 1000 nodes hold"},
		{func(o *bench.UsageOptions) { o.HPAs = 101 }, "--hpas: 101; give 1 to 100"},
		{func(o *bench.UsageOptions) { o.HPAs = 0 }, "--hpas: 0"},
		{func(o *bench.UsageOptions) { o.Window = 0 }, "--window: 0s"},
		{func(o *bench.UsageOptions) { o.TopRuns = 0 }, "--top-runs: 0"},
	} {
		o := ok
		tc.change(&o)
		if err := checkUsageFlags(&o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

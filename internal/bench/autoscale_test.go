package bench

import (
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Karpenter's evaluation histogram, scraped twice: the passes between are
// the differences, by reason and consolidation type.
func TestPassesBetween(t *testing.T) {
	scrape := func(text string) map[string]*dto.MetricFamily {
		p := expfmt.NewTextParser(model.UTF8Validation)
		m, err := p.TextToMetricFamilies(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	const head = "# TYPE karpenter_voluntary_disruption_decision_evaluation_duration_seconds histogram\n"
	series := func(typ string, count int, sum float64) string {
		return `karpenter_voluntary_disruption_decision_evaluation_duration_seconds_bucket{consolidation_type="` + typ + `",reason="underutilized",le="+Inf"} ` + strconv.Itoa(count) + "\n" +
			`karpenter_voluntary_disruption_decision_evaluation_duration_seconds_sum{consolidation_type="` + typ + `",reason="underutilized"} ` + strconv.FormatFloat(sum, 'f', -1, 64) + "\n" +
			`karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count{consolidation_type="` + typ + `",reason="underutilized"} ` + strconv.Itoa(count) + "\n"
	}
	before := scrape(head + series("single", 2, 1.0) + series("multi", 1, 0.5))
	after := scrape(head + series("single", 5, 2.5) + series("multi", 1, 0.5))
	got := passesBetween(before, after)
	if len(got) != 1 || got[0].kind != "single/underutilized" || got[0].count != 3 || got[0].total != 1500*time.Millisecond {
		t.Fatalf("passes = %+v, want 3 single passes of 1.5 s in all (multi unchanged)", got)
	}
	if got := passesBetween(map[string]*dto.MetricFamily{}, map[string]*dto.MetricFamily{}); len(got) != 0 {
		t.Fatalf("no histogram yet: %+v", got)
	}
}

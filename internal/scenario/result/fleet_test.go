package result

import (
	"testing"
	"time"
)

func at(s int) *time.Duration { d := time.Duration(s) * time.Second; return &d }

// Peak counts the spans open at once in a window: one that ends as
// another starts does not overlap it; one ended at the window's start, or
// started after its end, is outside it; one still open counts to the end.
func TestPeak(t *testing.T) {
	s := func(from int, to *time.Duration) Span { return Span{From: time.Duration(from) * time.Second, To: to} }
	spans := []Span{s(0, at(10)), s(10, at(20)), s(15, nil), s(30, nil), s(0, at(5))}
	for _, tc := range []struct {
		from, to   int
		most, when int
		which      []int
	}{
		{0, 40, 2, 0, []int{0, 4}},  // 0 and 4 at once first; 10 ends as 1 starts
		{5, 40, 2, 15, []int{1, 2}}, // 4 ended at 5; 1 and 2 from 15
		{21, 25, 1, 21, []int{2}},   // only the open one
		{40, 50, 2, 40, []int{2, 3}},
	} {
		most, when, which := Peak(spans, time.Duration(tc.from)*time.Second, time.Duration(tc.to)*time.Second)
		if most != tc.most || when != time.Duration(tc.when)*time.Second || len(which) != len(tc.which) || (len(which) > 0 && which[0] != tc.which[0]) {
			t.Errorf("[%d, %d]: %d at %s (%v); want %d at %ds (%v)", tc.from, tc.to, most, when, which, tc.most, tc.when, tc.which)
		}
	}
	if most, _, _ := Peak(spans, 41*time.Second, 41*time.Second); most != 2 {
		t.Errorf("a window of one moment: %d, want the 2 open then", most)
	}
}

func TestQuantiles(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*time.Second)
	}
	if m, p, x := Quantiles(ds); m != 50*time.Second || p != 95*time.Second || x != 100*time.Second {
		t.Errorf("median %s p95 %s max %s; want 50s 95s 100s", m, p, x)
	}
	if m, p, x := Quantiles(nil); m != 0 || p != 0 || x != 0 {
		t.Error("quantiles of none are not zero")
	}
}

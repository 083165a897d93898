package bench

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestPrintTakeover(t *testing.T) {
	var out bytes.Buffer
	PrintTakeover(&out, TakeoverResult{
		Nodes: 2000, Grace: 50 * time.Second,
		Held:   map[string]int{"bench-sim-1": 978, "bench-sim-0": 1022},
		Killed: "bench-sim-0", Took: 9876 * time.Millisecond,
		NotReady: 0, Window: time.Minute,
	})
	want := `nodes per simulator: bench-sim-0 1022, bench-sim-1 978 (max 2.2% off even; node-monitor grace 50s)
take-over of bench-sim-0's 1022 nodes (killed -9 until every Lease renewed by another): 9.88s
nodes NotReady in the 1m0s after the kill: 0 of 2000
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

func TestMaxDeviation(t *testing.T) {
	for _, tc := range []struct {
		held map[string]int
		want float64
	}{
		{map[string]int{"a": 500, "b": 500}, 0},
		{map[string]int{"a": 550, "b": 450}, 10},
		{map[string]int{"a": 300, "b": 300, "c": 400}, 20},
		{nil, 0},
	} {
		if got := maxDeviation(tc.held, 1000); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%v: %.2f%%, want %.2f%%", tc.held, got, tc.want)
		}
	}
}

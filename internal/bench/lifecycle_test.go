package bench

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{7 * s}, 7 * s},
		{[]time.Duration{9 * s, 1 * s, 5 * s}, 5 * s},
		{[]time.Duration{4 * s, 1 * s, 3 * s, 2 * s}, 3 * s}, // the upper middle
	} {
		in := slices.Clone(tc.in)
		if got := median(in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("median reordered its input: %v", in)
		}
	}
}

func TestMediansTakesEachColumn(t *testing.T) {
	s := time.Second
	rows := [][]time.Duration{{1 * s, 30 * s}, {3 * s, 10 * s}, {2 * s, 20 * s}}
	if got, want := medians(rows), []time.Duration{2 * s, 20 * s}; !slices.Equal(got, want) {
		t.Errorf("medians = %v, want %v", got, want)
	}
	if got := medians(nil); got != nil {
		t.Errorf("medians(nil) = %v, want nil", got)
	}
}

func TestPrintLifecycleRowLinesUpUnderTheHeader(t *testing.T) {
	var b bytes.Buffer
	printLifecycleRow(&b, "median", []time.Duration{1500 * time.Millisecond, 12 * time.Second})
	if got, want := b.String(), "median       1.50s    12.00s\n"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
}

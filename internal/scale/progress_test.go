package scale

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Parallel workers report their counts out of turn; what is printed only
// goes up.
func TestProgressNeverGoesBack(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		var out bytes.Buffer
		p := newProgress(&out, terminal)
		for _, done := range []int{6, 3, 7, 14, 12, 20} {
			p.show("creating nodes", done, 20)
		}
		p.finish("creating nodes", 20, 20)
		last := 0
		for _, field := range strings.FieldsFunc(out.String(), func(r rune) bool { return r == '\r' || r == '\n' || r == ' ' }) {
			var n int
			if _, err := fmt.Sscanf(field, "%d/20", &n); err != nil {
				continue
			}
			if n < last {
				t.Errorf("terminal %v: %d/20 printed after %d/20:\n%q", terminal, n, last, out.String())
			}
			last = n
		}
		if last != 20 {
			t.Errorf("terminal %v: last count %d, want 20:\n%q", terminal, last, out.String())
		}
	}
}

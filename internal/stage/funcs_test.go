package stage

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"
)

// A Stage's templates get no environment, no network, no keys: such a
// helper is undefined, so the Stage does not compile, and the error names
// the template and the helper.
func TestTemplatesCannotReachOutsideTheProcess(t *testing.T) {
	for _, call := range []string{
		`env "AWS_SECRET_ACCESS_KEY"`, `expandenv "$HOME"`, `getHostByName "example.com"`,
		`genPrivateKey "rsa"`, `genCA "ca" 365`, `bcrypt "secret"`, `derivePassword 1 "long" "pw" "user" "site"`,
	} {
		name := strings.Fields(call)[0]
		_, err := compileSpec("  resourceRef: {kind: Pod}\n  next: {statusTemplate: 'message: {{ " + call + " }}'}\n")
		if err == nil || !strings.Contains(err.Error(), "spec.next.statusTemplate") ||
			!strings.Contains(err.Error(), `function "`+name+`" not defined`) {
			t.Errorf("{{ %s }}: compiled with error %v, want %q not defined in spec.next.statusTemplate", call, err, name)
		}
	}
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A render stops at maxRender, whether the template writes its way past
// it or calls a helper that would build more: it fails, having taken a
// few MiB at most.
func TestRenderStopsAtItsCap(t *testing.T) {
	for _, tmpl := range []string{
		`{{ range until 100000 }}twenty-five bytes a line{{ end }}`,
		`{{ repeat 50000000 "x" }}`,
		`{{ indent 50000000 "x" }}`,
		`{{ nindent 2000 (repeat 1000 "\n") }}`,
		`{{ replace "" (repeat 1000 "y") (repeat 100000 "x") }}`,
		`{{ wrapWith 1 (repeat 1000 "-") (repeat 10000 "x") }}`,
		`{{ until 50000000 }}`,
		`{{ untilStep -50000000 50000000 1 }}`,
		`{{ seq 50000000 }}`,
	} {
		s := compileYAML(t, "  resourceRef: {kind: Pod}\n  next: {statusTemplate: 'x: "+tmpl+"'}\n")
		var err error
		if n := allocated(func() { _, err = s.Plan(obj(t, pendingPod), Traits{}, nil) }); n > 8<<20 {
			t.Errorf("%s: allocated %d MiB", tmpl, n>>20)
		}
		if !errors.Is(err, errTooLarge) {
			t.Errorf("%s: rendered with error %v, want %v", tmpl, err, errTooLarge)
		}
	}
}

// until, untilStep and seq are sprig's, bounded: they agree with sprig's
// on what sprig can do, and give two ints where sprig's untilStep wraps
// past the largest int into a loop that never ends.
func TestBoundedListHelpersAgreeWithSprig(t *testing.T) {
	sprigs := sprig.TxtFuncMap()
	sprigUntil, sprigUntilStep := sprigs["until"].(func(int) []int), sprigs["untilStep"].(func(int, int, int) []int)
	sprigSeq := sprigs["seq"].(func(...int) string)
	for _, n := range []int{-3, 0, 5} {
		if got, _ := until(n); !slices.Equal(got, sprigUntil(n)) {
			t.Errorf("until %d = %v, sprig's %v", n, got, sprigUntil(n))
		}
	}
	for _, a := range [][3]int{{0, 10, 3}, {10, 0, -3}, {0, 10, -1}, {10, 0, 1}, {5, 5, 1}, {0, 10, 0}, {-7, 7, 7}} {
		if got, _ := untilStep(a[0], a[1], a[2]); !slices.Equal(got, sprigUntilStep(a[0], a[1], a[2])) {
			t.Errorf("untilStep %v = %v, sprig's %v", a, got, sprigUntilStep(a[0], a[1], a[2]))
		}
	}
	for _, a := range [][]int{{}, {5}, {-2}, {1, 5}, {5, 1}, {0, 2, 10}, {10, -3, 0}, {0, -1, 10}, {10, 1, 0}, {1, 0, 5}, {1, 2, 3, 4}} {
		if got, _ := seq(a...); got != sprigSeq(a...) {
			t.Errorf("seq %v = %q, sprig's %q", a, got, sprigSeq(a...))
		}
	}
	if got, err := untilStep(0, math.MaxInt, math.MaxInt/2+1); !slices.Equal(got, []int{0, math.MaxInt/2 + 1}) || err != nil {
		t.Errorf("untilStep 0 MaxInt MaxInt/2+1 = %v, %v; want [0 MaxInt/2+1]", got, err)
	}
}

package stage

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

// maxRender caps what one template renders, and what any helper with a
// result its arguments multiply (repeat, indent, until…) may build: a
// status is kilobytes, and the API server refuses a request of 3 MiB.
const maxRender = 1 << 20

var errTooLarge = fmt.Errorf("past the limit of %d bytes a template may build", maxRender)

// cappedBuffer is where a template renders: writes past maxRender fail,
// so a runaway template stops while rendering instead of filling memory.
// It has no other way in than Write.
type cappedBuffer struct{ buf bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > maxRender {
		return 0, errTooLarge
	}
	return b.buf.Write(p)
}

// fits refuses n pieces of size bytes each past maxRender.
func fits(n, size int) error {
	if n > 0 && size > maxRender/n {
		return errTooLarge
	}
	return nil
}

// bound replaces the sprig helpers of funcs that build a result their
// arguments multiply, before anything is written and so out of the
// render cap's sight, with ones that refuse such a result past maxRender.
func bound(funcs template.FuncMap) {
	repeat := funcs["repeat"].(func(int, string) string)
	indent := funcs["indent"].(func(int, string) string)
	nindent := funcs["nindent"].(func(int, string) string)
	replace := funcs["replace"].(func(string, string, string) string)
	wrapWith := funcs["wrapWith"].(func(int, string, string) string)
	padded := func(spaces int, s string) error { return fits(strings.Count(s, "\n")+1, spaces) }
	funcs["repeat"] = func(count int, s string) (string, error) {
		return built(fits(count, len(s)), func() string { return repeat(count, s) })
	}
	funcs["indent"] = func(spaces int, s string) (string, error) {
		return built(padded(spaces, s), func() string { return indent(spaces, s) })
	}
	funcs["nindent"] = func(spaces int, s string) (string, error) {
		return built(padded(spaces, s), func() string { return nindent(spaces, s) })
	}
	funcs["replace"] = func(old, new, s string) (string, error) {
		return built(fits(strings.Count(s, old), len(new)), func() string { return replace(old, new, s) })
	}
	funcs["wrapWith"] = func(width int, sep, s string) (string, error) {
		return built(fits(len(s)/max(width, 1)+1, len(sep)), func() string { return wrapWith(width, sep, s) })
	}
	funcs["until"] = until
	funcs["untilStep"] = untilStep
	funcs["seq"] = seq
}

// built is what build builds, unless check (its size, checked before) is
// an error.
func built(check error, build func() string) (string, error) {
	if check != nil {
		return "", check
	}
	return build(), nil
}

// untilStep is sprig's: the ints from start towards stop, stop left out,
// by step; empty if step leads away. Unlike sprig's, it refuses a list
// past maxRender (at 8 bytes an int), and cannot wrap around past the
// largest int into a loop that never ends.
func untilStep(start, stop, step int) ([]int, error) {
	var n uint64 // how many: ceil(|stop-start| / |step|), in uint64 so no int overflows
	switch {
	case step > 0 && stop > start:
		n = (uint64(stop)-uint64(start)-1)/uint64(step) + 1
	case step < 0 && stop < start:
		n = (uint64(start)-uint64(stop)-1)/-uint64(step) + 1
	}
	if n > maxRender/8 {
		return nil, errTooLarge
	}
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step
	}
	return out, nil
}

// until is sprig's: 0 up (or down) to count, count left out.
func until(count int) ([]int, error) {
	if count < 0 {
		return untilStep(0, count, -1)
	}
	return untilStep(0, count, 1)
}

// seq is sprig's (and the shell's): "[first [step]] last", the ints from
// first to last, last included, joined by spaces.
func seq(params ...int) (string, error) {
	first, step, last := 1, 0, 0
	switch len(params) {
	case 1:
		last = params[0]
	case 2:
		first, last = params[0], params[1]
	case 3:
		first, step, last = params[0], params[1], params[2]
	default:
		return "", nil
	}
	towards := 1
	if last < first {
		towards = -1
	}
	if len(params) < 3 {
		step = towards
	}
	ints, err := untilStep(first, last+towards, step)
	words := make([]string, len(ints))
	for i, v := range ints {
		words[i] = strconv.Itoa(v)
	}
	return strings.Join(words, " "), err
}

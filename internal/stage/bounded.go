package stage

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

// maxRender caps what one template renders, and what any helper with a
// result its arguments multiply (repeat, indent, until…) may build: a
// status is kilobytes, and the API server refuses a request of 3 MiB.
const maxRender = 1 << 20

var errTooLarge = fmt.Errorf("%w: past the limit of %d bytes a template may build", errFenced, maxRender)

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
	for _, name := range []string{"regexReplaceAll", "mustRegexReplaceAll"} {
		funcs[name] = regexReplace(funcs[name], false)
	}
	for _, name := range []string{"regexReplaceAllLiteral", "mustRegexReplaceAllLiteral"} {
		funcs[name] = regexReplace(funcs[name], true)
	}
	splitList := funcs["splitList"].(func(string, string) []string)
	split := funcs["split"].(func(string, string) map[string]string)
	splitn := funcs["splitn"].(func(string, int, string) map[string]string)
	funcs["splitList"] = func(sep, s string) ([]string, error) {
		return built(pieces(sep, s, -1), func() []string { return splitList(sep, s) })
	}
	funcs["split"] = func(sep, s string) (map[string]string, error) {
		return built(pieces(sep, s, -1), func() map[string]string { return split(sep, s) })
	}
	funcs["splitn"] = func(sep string, n int, s string) (map[string]string, error) {
		return built(pieces(sep, s, n), func() map[string]string { return splitn(sep, n, s) })
	}
	funcs["until"] = until
	funcs["untilStep"] = untilStep
	funcs["seq"] = seq
	// text/template's own, which a FuncMap may replace: print and the
	// escapers make at most some ten times what they take, printf also
	// what its widths and precisions ask for (up to a million each).
	funcs["printf"] = printf
	funcs["print"] = fmt.Sprint
	funcs["println"] = fmt.Sprintln
	funcs["html"] = template.HTMLEscaper
	funcs["js"] = template.JSEscaper
	funcs["urlquery"] = template.URLQueryEscaper
}

// built is what build builds, unless check (its size, checked before) is
// an error.
func built[T any](check error, build func() T) (T, error) {
	if check != nil {
		var zero T
		return zero, check
	}
	return build(), nil
}

// pieces refuses splitting s by sep into more pieces than maxRender
// allows at 16 bytes a piece (splitting by "" makes one a byte).
func pieces(sep, s string, n int) error {
	count := strings.Count(s, sep) + 1
	if n > 0 {
		count = min(count, n)
	}
	return fits(count, 16)
}

// regexReplace bounds sprig's regexReplaceAll (and its must- and -Literal
// kinds: fn, taking regex, s, repl): each match adds repl, and each $ in
// repl (non-literal) at most the whole match.
func regexReplace(fn any, literal bool) func(string, string, string) (string, error) {
	return func(regex, s, repl string) (string, error) {
		re, err := regexp.Compile(regex)
		if err != nil {
			return "", err
		}
		dollars := strings.Count(repl, "$")
		if literal {
			dollars = 0
		}
		size := len(s)
		if repl == "" {
			return callReplace(fn, regex, s, repl)
		}
		for _, m := range re.FindAllStringIndex(s, maxRender+1) {
			if size += len(repl) + dollars*(m[1]-m[0]); size > maxRender {
				return "", errTooLarge
			}
		}
		return callReplace(fn, regex, s, repl)
	}
}

func callReplace(fn any, regex, s, repl string) (string, error) {
	switch fn := fn.(type) {
	case func(string, string, string) string:
		return fn(regex, s, repl), nil
	case func(string, string, string) (string, error):
		return fn(regex, s, repl)
	}
	return "", fmt.Errorf("regexReplace: unexpected helper %T", fn)
}

// printf is text/template's, refusing a format whose widths and
// precisions alone ask for more than maxRender.
func printf(format string, args ...any) (string, error) {
	if padding(format) > maxRender {
		return "", errTooLarge
	}
	return fmt.Sprintf(format, args...), nil
}

// padding is about the sum of the widths and precisions format asks for,
// a '*' (one taken from an argument) counting as fmt's largest, 1e6.
func padding(format string) int {
	const most = 1e6 // fmt refuses a width or precision past it
	total := 0
	for i := 0; i < len(format) && total <= maxRender; i++ {
		if format[i] != '%' {
			continue
		}
		num := 0
		for i++; i < len(format); i++ {
			c := format[i]
			if c >= '0' && c <= '9' {
				num = min(num*10+int(c-'0'), most)
				continue
			}
			total, num = total+num, 0
			if c == '*' {
				total += most
				continue
			}
			if !strings.ContainsRune("+-# .[]", rune(c)) {
				break
			}
		}
		total += num
	}
	return total
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

package supervisor

import (
	"bytes"
	"io"
	"regexp"
)

// quietLines passes a component's output on to its log, leaving out the
// whole lines its entry declares harmless noise (component.Quiet). A line
// split across writes is passed on as it comes: the filter holds nothing
// back, so it may keep noise but never delays or loses a line.
type quietLines struct {
	w     io.Writer
	quiet []*regexp.Regexp
}

// withoutQuietLines is w, or w behind a quietLines if there are patterns.
func withoutQuietLines(w io.Writer, quiet []*regexp.Regexp) io.Writer {
	if len(quiet) == 0 {
		return w
	}
	return &quietLines{w: w, quiet: quiet} // a pointer: exec gives equal Stdout and Stderr one pipe
}

func (q *quietLines) Write(p []byte) (int, error) {
	kept := p[:0:0]
	for rest := p; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		if !q.isQuiet(line) {
			kept = append(kept, line...)
		}
	}
	if len(kept) == 0 {
		return len(p), nil
	}
	if _, err := q.w.Write(kept); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (q *quietLines) isQuiet(line []byte) bool {
	if line[len(line)-1] != '\n' {
		return false // part of a line; the rest may say otherwise
	}
	for _, re := range q.quiet {
		if re.Match(line) {
			return true
		}
	}
	return false
}

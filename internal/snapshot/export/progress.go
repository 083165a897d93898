package export

import (
	"fmt"
	"io"
	"strings"
)

// progress is one kind's line on a terminal, redrawn as pages come in.
type progress struct {
	out  io.Writer
	kind string
	n    int
}

func newProgress(out io.Writer, terminal bool, kind string) *progress {
	if !terminal {
		out = nil
	}
	return &progress{out: out, kind: kind}
}

func (p *progress) show(n int) {
	p.n = n
	if p.out != nil {
		fmt.Fprintf(p.out, "\rreading %-32s %d", p.kind+"s", n)
	}
}

func (p *progress) done() {
	if p.out != nil && p.n > 0 {
		fmt.Fprintln(p.out)
	} else if p.out != nil {
		fmt.Fprintf(p.out, "\r%s\r", strings.Repeat(" ", 48))
	}
}

// oneLine is an error's message on one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

package scale

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports how far an operation is: a bar redrawn in place on a
// terminal, otherwise a plain line now and then (every 10% or 5 seconds).
type progress struct {
	out      io.Writer
	terminal bool

	mu       sync.Mutex
	lastPct  int
	lastDone int
	lastLine time.Time
}

func newProgress(out io.Writer, terminal bool) *progress {
	return &progress{out: out, terminal: terminal, lastPct: -1}
}

func (p *progress) show(what string, done, total int) {
	if p.out == nil || total == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Counts come from parallel workers, which may report out of turn:
	// one behind what is shown already says nothing new.
	if done < p.lastDone {
		return
	}
	p.lastDone = done
	pct := done * 100 / total
	if p.terminal {
		if pct != p.lastPct {
			const width = 30
			bar := strings.Repeat("#", pct*width/100) + strings.Repeat(" ", width-pct*width/100)
			fmt.Fprintf(p.out, "\r%-16s [%s] %d/%d", what, bar, done, total)
			p.lastPct = pct
		}
		return
	}
	if pct/10 != p.lastPct/10 || time.Since(p.lastLine) > 5*time.Second {
		fmt.Fprintf(p.out, "%s: %d/%d\n", what, done, total)
		p.lastPct, p.lastLine = pct, time.Now()
	}
}

// finish ends the operation's report with its final count.
func (p *progress) finish(what string, done, total int) {
	if p.out == nil || total == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		fmt.Fprintf(p.out, "\r%-16s %d/%d%s\n", what, done, total, strings.Repeat(" ", 40))
	} else if p.lastPct != 100 {
		fmt.Fprintf(p.out, "%s: %d/%d\n", what, done, total)
	}
	p.lastPct, p.lastDone = -1, 0
}

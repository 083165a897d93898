package descheduler

import (
	"bytes"
	"flag"
	"io"

	"k8s.io/klog/v2"
)

// LogErrors sends upstream's log lines of this process to w, keeping only
// its errors, for a command whose output is its report. One error is
// expected and left out: as a single cycle ends, upstream cancels its
// context and then shuts down its Event recorder, whose queued Events fail
// with "Unable to write event … context canceled"; the tap has written
// each of those Events itself (Options.Interval 0), so nothing is lost.
func LogErrors(w io.Writer) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("stderrthreshold", "FATAL") // klog writes to stderr itself from this severity on
	_ = fs.Set("one_output", "true")       // each line once, not once for each severity below it too
	klog.LogToStderr(false)
	klog.SetOutput(errorLines{w})
}

// errorLines passes on the error and fatal lines klog writes, one a write,
// but the recorder's after a single cycle.
type errorLines struct{ w io.Writer }

func (e errorLines) Write(p []byte) (int, error) {
	if len(p) == 0 || p[0] != 'E' && p[0] != 'F' || cancelledEvent(p) {
		return len(p), nil
	}
	return e.w.Write(p)
}

func cancelledEvent(line []byte) bool {
	return bytes.Contains(line, []byte(`"Unable to write event`)) && bytes.Contains(line, []byte("context canceled"))
}

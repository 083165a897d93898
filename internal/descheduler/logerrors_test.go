package descheduler

import (
	"strings"
	"testing"
)

// Errors reach the user; the Event recorder's complaint as a single cycle
// ends, and everything below an error, do not.
func TestLogErrorsKeepsRealErrorsOnly(t *testing.T) {
	var out strings.Builder
	w := errorLines{&out}
	for _, line := range []string{
		`E1125 12:22:20.006319   20159 event_broadcaster.go:279] "Unable to write event (may retry after sleeping)" err="client rate limiter Wait returned an error: context canceled"` + "\n",
		`I1125 12:22:20.006319   20159 descheduler.go:100] "Building a pod evictor"` + "\n",
		`W1125 12:22:20.006319   20159 descheduler.go:100] "a warning"` + "\n",
		`E1125 12:22:20.006319   20159 descheduler.go:500] failed to run descheduler loop: boom` + "\n",
		`E1125 12:22:20.006319   20159 event_broadcaster.go:279] "Unable to write event (may retry after sleeping)" err="connection refused"` + "\n",
	} {
		if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	got := out.String()
	if strings.Count(got, "\n") != 2 || !strings.Contains(got, "boom") || !strings.Contains(got, "connection refused") {
		t.Errorf("passed on:\n%s\nwant the loop's error and the refused connection only", got)
	}
}

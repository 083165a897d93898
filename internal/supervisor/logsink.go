package supervisor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"
)

// A component's stdout and stderr reach its log through a pipe that
// os/exec drains into the log writer. Were a write to the log to fail (a
// full disk), the draining would stop and the component would die of
// EPIPE at its next line: a full disk would take etcd and the API server
// down with it. So the log sink never fails towards the component: while
// the log cannot be written it drops what comes (counting it), retries
// now and then, and once the log can be written again says there how
// much was lost.

// logRetryEvery is how often a sink whose log cannot be written tries it
// again: on the next output after this long, or on its own if there is
// none.
const logRetryEvery = time.Second

// logSink drains a component's output into its log, never failing.
type logSink struct {
	name string
	w    io.Writer
	// report is told the error when writing starts failing, and nil when
	// it works again. It is called with the sink's lock held: it must not
	// write to this sink.
	report     func(err error)
	now        func() time.Time
	retryEvery time.Duration

	mu      sync.Mutex
	err     error     // why the log cannot be written; nil while it can
	since   time.Time // when it began failing
	lost    int64     // bytes dropped since then
	nextTry time.Time
	retrier bool // a goroutine retries while err != nil
	stop    chan struct{}
	closed  bool
	// midLine: the last byte written was not a newline. A process killed
	// mid-line leaves its last line open; the next one's first would
	// continue it.
	midLine bool
}

func newLogSink(name string, w io.Writer, report func(error)) *logSink {
	if report == nil {
		report = func(error) {}
	}
	return &logSink{name: name, w: w, report: report, now: time.Now, retryEvery: logRetryEvery, stop: make(chan struct{})}
}

// Write writes p to the log, or drops it if the log cannot be written. It
// always reports success.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil && (s.now().Before(s.nextTry) || !s.recoverLocked()) {
		s.lost += int64(len(p))
		return len(p), nil
	}
	n, err := s.w.Write(p)
	if n > 0 {
		s.midLine = p[n-1] != '\n'
	}
	if err != nil {
		s.failLocked(err, int64(len(p)-max(n, 0)))
	}
	return len(p), nil
}

// failLocked records that a write failed, losing n bytes.
func (s *logSink) failLocked(err error, n int64) {
	s.err, s.since, s.lost = err, s.now(), n
	s.nextTry = s.since.Add(s.retryEvery)
	s.reopenLocked()
	s.report(err)
	if !s.retrier && !s.closed {
		s.retrier = true
		go s.retry()
	}
}

// reopenLocked closes the log file, if the writer can, so that the next
// write opens it afresh: a log replaced or deleted meanwhile is written
// again.
func (s *logSink) reopenLocked() {
	if c, ok := s.w.(io.Closer); ok {
		_ = c.Close()
	}
}

// recoverLocked tries to write the line saying what was lost; if it can,
// the log works again.
func (s *logSink) recoverLocked() bool {
	line := fmt.Sprintf("kubesim: %s's log could not be written for %s (%s): %d bytes of its output were lost\n",
		s.name, s.now().Sub(s.since).Round(time.Millisecond), errorText(s.err), s.lost)
	if _, err := io.WriteString(s.w, line); err != nil {
		s.nextTry = s.now().Add(s.retryEvery)
		s.reopenLocked()
		return false
	}
	s.err, s.lost = nil, 0
	s.report(nil)
	return true
}

// retry tries the log on its own while it fails, so that a component
// that has nothing to say is not reported failing for ever.
func (s *logSink) retry() {
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(s.retryEvery):
		}
		s.mu.Lock()
		if s.err == nil || s.recoverLocked() {
			s.retrier = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// Close stops retrying, and closes the log. A log still failing is no
// longer reported: its component has exited.
func (s *logSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	close(s.stop)
	if s.err != nil && !s.recoverLocked() {
		s.report(nil)
	}
	if s.err == nil && s.midLine {
		_, _ = io.WriteString(s.w, "\n")
	}
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// errorText is the heart of a file error ("no space left on device"),
// without the path the user need not read twice.
func errorText(err error) string {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err.Error()
	}
	return err.Error()
}

// logProblem is what the log sink of a component reports to: the health
// record, and the supervisor's log.
func (s *supervisor) logProblem(component string) func(error) {
	record := s.health.logProblem(component)
	return func(err error) {
		record(err)
		if err != nil {
			s.logger.Printf("%s's log cannot be written (%v); dropping its output until it can", component, err)
		} else {
			s.logger.Printf("%s's log no longer fails", component)
		}
	}
}

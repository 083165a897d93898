// Command probe measures, in real time, how long the Go clock's waits take in
// a binary built with the scaled-clock overlay (patches/go). Each mode prints
// one line of JSON; test/clock runs it at several scales.
//
//	probe sleep 30s        time.Sleep
//	probe ticker 1s 10     ten ticks of a ticker
//	probe ctx 10s          context.WithTimeout until Done
//	probe tcp 10s          a TCP read with a read deadline
//	probe now              time.Now beside the real wall clock
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// realNano reads a real clock with a system call, which the overlay does not scale.
func realNano(clock int) int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return ts.Nano()
}

const (
	clockRealtime  = 0
	clockMonotonic = 1
)

type result struct {
	Mode        string `json:"mode"`
	RealNanos   int64  `json:"realNanos"`             // real time the wait took
	SinceNanos  int64  `json:"sinceNanos"`            // time.Since over the same wait
	Err         string `json:"err,omitempty"`         // the error the wait ended with
	VirtualUnix int64  `json:"virtualUnix,omitempty"` // now: time.Now().UnixNano()
	RealUnix    int64  `json:"realUnix,omitempty"`    // now: CLOCK_REALTIME read just before it
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: probe sleep|ticker|ctx|tcp|now [duration] [count]")
	}
	mode := os.Args[1]
	var d time.Duration
	if len(os.Args) > 2 {
		var err error
		if d, err = time.ParseDuration(os.Args[2]); err != nil {
			fail("duration: " + err.Error())
		}
	}
	r := result{Mode: mode}
	start, vstart := realNano(clockMonotonic), time.Now()
	switch mode {
	case "sleep":
		time.Sleep(d)
	case "ticker":
		n, err := strconv.Atoi(os.Args[3])
		if err != nil {
			fail("count: " + err.Error())
		}
		t := time.NewTicker(d)
		for range n {
			<-t.C
		}
		t.Stop()
	case "ctx":
		ctx, cancel := context.WithTimeout(context.Background(), d)
		<-ctx.Done()
		r.Err = ctx.Err().Error()
		cancel()
	case "tcp":
		r.Err = tcpRead(d)
	case "now":
		r.RealUnix = realNano(clockRealtime)
		r.VirtualUnix = time.Now().UnixNano()
	default:
		fail("unknown mode " + mode)
	}
	r.RealNanos = realNano(clockMonotonic) - start
	r.SinceNanos = int64(time.Since(vstart))
	json.NewEncoder(os.Stdout).Encode(r)
}

// tcpRead reads from a connection that never sends, with a read deadline d
// ahead, and returns how the read ended.
func tcpRead(d time.Duration) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err.Error())
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(time.Hour)
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fail(err.Error())
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(d))
	_, err = c.Read(make([]byte, 1))
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return fmt.Sprint(err)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "probe:", msg)
	os.Exit(2)
}

package supervisor

import (
	"regexp"
	"strings"
	"testing"
)

// Lines a component declares harmless stay out of its log; every other
// line, and a line split across writes, reaches it whole.
func TestQuietLinesLeavesOutOnlyTheDeclaredNoise(t *testing.T) {
	var log strings.Builder
	w := withoutQuietLines(&log, []*regexp.Regexp{regexp.MustCompile(`createTransport failed .*use of closed network connection`)})
	noise := `W1125 logging.go:55] [core] grpc: addrConn.createTransport failed to connect to {Addr: "unix:///x/etcd.sock"}. Err: use of closed network connection` + "\n"
	real := `W1125 logging.go:55] [core] grpc: addrConn.createTransport failed to connect to {Addr: "unix:///x/etcd.sock"}. Err: connection refused` + "\n"
	for _, write := range []string{
		"I1125 started\n" + noise + real,
		noise,
		"E1125 a line in", " two writes: use of closed network connection createTransport failed\n",
	} {
		if n, err := w.Write([]byte(write)); n != len(write) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	want := "I1125 started\n" + real + "E1125 a line in two writes: use of closed network connection createTransport failed\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
}

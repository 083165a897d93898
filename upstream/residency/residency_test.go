package residency

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// rssFile is this process's resident pages of files, in KiB.
func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

func TestReleaseExecutableKeepsTheProcessWorking(t *testing.T) {
	segments, err := readOnlySegments("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if len(segments) == 0 {
		t.Skip("a position-independent test binary: nothing is released")
	}
	before := rssFile(t)
	n, err := ReleaseExecutable()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFile(t)
	if n == 0 || after >= before {
		t.Errorf("released %d bytes of segments; RssFile %d KiB → %d KiB, want fewer", n, before, after)
	}
	// Code, read-only data and the loader's relocations still work: call
	// into libc-free runtime paths, allocate, format, read a file again.
	if _, err := os.ReadFile("/proc/self/status"); err != nil || strconv.Itoa(42) != "42" {
		t.Fatal("the process broke after releasing", err)
	}
}

func TestReadOnlySegmentsSkipsWritableAndRelocated(t *testing.T) {
	segments, err := readOnlySegments("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segments {
		if s.start%uintptr(os.Getpagesize()) != 0 || s.end%uintptr(os.Getpagesize()) != 0 || s.end <= s.start {
			t.Errorf("segment %#x-%#x is not whole pages", s.start, s.end)
		}
	}
	// A package variable lives in a writable segment, never in one released.
	addr := uintptr(unsafe.Pointer(&testVariable))
	for _, s := range segments {
		if s.start <= addr && addr < s.end {
			t.Errorf("writable data at %#x lies in released segment %#x-%#x", addr, s.start, s.end)
		}
	}
}

var testVariable = 1

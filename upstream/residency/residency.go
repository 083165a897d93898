// Package residency gives back the pages of kubesim's own executable that
// only a component's start-up needed.
//
// Every component is the one kubesim binary, and Go runs the init of every
// package linked in — the API server's, the controller-manager's, etcd's —
// in each process. The kernel maps code around every page touched (fault-
// around, 64 KiB), so each process ends start-up with ~90–110 MiB of the
// binary resident, most of which it never runs again. Those pages are the
// file's, shared, and clean: unmapping them loses nothing, and the ones
// still used come back from the page cache on their next touch.
package residency

import (
	"debug/elf"
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// ReleaseAfter releases the executable's start-up pages once, delay after
// it is called, in the background.
func ReleaseAfter(delay time.Duration) {
	go func() {
		time.Sleep(delay)
		_, _ = ReleaseExecutable()
	}()
}

// ReleaseExecutable unmaps the resident pages of the executable's
// read-only segments (code and read-only data, as its ELF program headers
// say) and returns how many bytes those segments span. Writable segments,
// and the relocated part of them the loader makes read-only afterwards
// (RELRO), are left alone: the file does not have what was written there.
// A position-independent executable is left alone altogether, as its
// segments are not where its headers say.
func ReleaseExecutable() (int, error) {
	segments, err := readOnlySegments("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	released := 0
	for _, r := range segments {
		// A raw call: the range is not Go memory, so no []byte stands for it.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, unix.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %#x-%#x: %w", r.start, r.end, errno)
		}
		released += int(r.end - r.start)
	}
	return released, nil
}

type span struct{ start, end uintptr }

// readOnlySegments lists the whole pages of exe's loadable segments that
// are neither writable nor relocated, for a fixed-address executable.
func readOnlySegments(exe string) ([]span, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return nil, nil
	}
	var relro []span
	for _, p := range f.Progs {
		if p.Type == elf.PT_GNU_RELRO {
			relro = append(relro, span{uintptr(p.Vaddr), uintptr(p.Vaddr + p.Memsz)})
		}
	}
	page := uintptr(os.Getpagesize())
	var out []span
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_W != 0 {
			continue
		}
		// Inward to whole pages: a page shared with a neighbour is kept.
		s := span{(uintptr(p.Vaddr) + page - 1) &^ (page - 1), uintptr(p.Vaddr+p.Filesz) &^ (page - 1)}
		if s.end <= s.start || slices.ContainsFunc(relro, func(r span) bool { return r.start < s.end && s.start < r.end }) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

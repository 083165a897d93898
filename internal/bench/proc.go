package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat times
// (100 on every Linux kubesim runs on).
const clockTicks = 100

// usage is what one process has used so far.
type usage struct {
	cpu  time.Duration
	rss  int64 // bytes
	peak int64 // bytes: the process's high-water mark of RSS (VmHWM)
}

// componentUsage reads the CPU time and memory of each of a cluster's
// component processes (`kubesim component NAME …` naming a path under dir).
func componentUsage(dir string) map[string]usage {
	out := map[string]usage{}
	for name, pids := range componentProcesses(dir) {
		for _, pid := range pids {
			u, err := processUsage(pid)
			if err != nil {
				continue
			}
			prev := out[name]
			out[name] = usage{cpu: prev.cpu + u.cpu, rss: prev.rss + u.rss, peak: prev.peak + u.peak}
		}
	}
	return out
}

// componentProcesses are the pids of a cluster's components, by name.
func componentProcesses(dir string) map[string][]int {
	out := map[string][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir+"/")) {
			continue
		}
		if args := strings.Split(string(cmdline), "\x00"); len(args) >= 3 && args[1] == "component" {
			out[args[2]] = append(out[args[2]], pid)
		}
	}
	return out
}

func processUsage(pid int) (usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return usage{}, err
	}
	// Fields after the command name, which may hold spaces: state is [0],
	// utime [11], stime [12], rss (pages) [21].
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 22 {
		return usage{}, fmt.Errorf("short stat for %d", pid)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	rssPages, _ := strconv.ParseInt(fields[21], 10, 64)
	return usage{
		cpu:  time.Duration(utime+stime) * time.Second / clockTicks,
		rss:  rssPages * int64(os.Getpagesize()),
		peak: peakRSS(pid),
	}, nil
}

// peakRSS is a process's VmHWM in bytes, 0 if unreadable.
func peakRSS(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuSince is the CPU each component used between two readings.
func cpuSince(before, after map[string]usage) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, a := range after {
		out[name] = a.cpu - before[name].cpu
	}
	return out
}

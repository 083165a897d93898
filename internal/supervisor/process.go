package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// A supervisor's PID file records its PID and its start time (in clock
// ticks since boot, from /proc), so that a PID reused by another process
// after a crash or a reboot is never mistaken for it: only a process with
// the recorded start time whose command line is this cluster's supervisor
// is ever signalled.

// pidRecord is what a PID file holds.
type pidRecord struct {
	pid   int
	start uint64 // 0 if unknown (written by an older kubesim)
}

func (r pidRecord) String() string { return fmt.Sprintf("%d %d", r.pid, r.start) }

// ownPIDRecord is the record of the calling process.
func ownPIDRecord() (pidRecord, error) {
	st, err := readProcStat(os.Getpid())
	if err != nil {
		return pidRecord{}, err
	}
	return pidRecord{pid: os.Getpid(), start: st.start}, nil
}

// parsePIDRecord reads a PID file's contents. PIDs 0 and 1 and negative
// ones are refused: kill(0) and kill(-1) reach far more than a cluster.
func parsePIDRecord(data []byte) (pidRecord, error) {
	fields := strings.Fields(string(data))
	if len(fields) == 0 || len(fields) > 2 {
		return pidRecord{}, fmt.Errorf("malformed PID file %q", data)
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 1 {
		return pidRecord{}, fmt.Errorf("PID file names %q, not a process kubesim could have started", fields[0])
	}
	r := pidRecord{pid: pid}
	if len(fields) == 2 {
		if r.start, err = strconv.ParseUint(fields[1], 10, 64); err != nil {
			return pidRecord{}, fmt.Errorf("malformed PID file %q", data)
		}
	}
	return r, nil
}

// procStat is what kubesim reads of /proc/PID/stat.
type procStat struct {
	state byte   // R, S, Z…
	pgrp  int    // process group
	start uint64 // start time, clock ticks since boot
}

func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name, in parentheses, may hold anything; the fields after
	// it are: state [0], ppid [1], pgrp [2], … starttime [19].
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return procStat{}, errors.New("short /proc stat")
	}
	pgrp, err1 := strconv.Atoi(fields[2])
	start, err2 := strconv.ParseUint(fields[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, err
	}
	return procStat{state: fields[0][0], pgrp: pgrp, start: start}, nil
}

// alive reports whether r's process runs: not a zombie, and started when
// recorded (when that is known), not a later process with its PID.
func (r pidRecord) alive() bool {
	st, err := readProcStat(r.pid)
	return err == nil && st.state != 'Z' && (r.start == 0 || st.start == r.start)
}

// isSupervisorOf reports whether r names a live process that is d's
// supervisor: the start time recorded, and the command line Launch gave it.
func (r pidRecord) isSupervisorOf(d clusterdir.Dir) bool {
	if !r.alive() {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", r.pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	return len(args) > 2 && args[1] == "component" && args[2] == Name && slices.Contains(args, "--name="+d.Name)
}

// groupAlive lists the live (not zombie) processes of process group pgid.
// A zombie has exited; it lingers only until its parent, or init, reaps it
// — which some containers' init never does.
func groupAlive(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var alive []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil && st.pgrp == pgid && st.state != 'Z' {
			alive = append(alive, pid)
		}
	}
	return alive
}

// zombie reports whether pid is a process that has exited but not been reaped.
func zombie(pid int) bool {
	st, err := readProcStat(pid)
	return err == nil && st.state == 'Z'
}

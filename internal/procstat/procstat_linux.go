// Package procstat is the one reader of a process's state and start time
// from /proc (claims compare start times in ms, reservations in seconds).
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
)

// ClockTicks is USER_HZ (sysconf(_SC_CLK_TCK)), the unit of the starttime
// field of /proc/PID/stat; it is 100 on every Linux ABI Go supports.
const ClockTicks = 100

// Stat is the part of /proc/PID/stat leasewrap reads.
type Stat struct {
	Comm       string // field 2, without its parentheses
	State      byte   // field 3: R, S, D, Z, T, …
	PPID       int    // field 4
	PGRP       int    // field 5: process group
	StartTicks uint64 // field 22: start time in clock ticks after boot
}

// Read parses /proc/PID/stat. The command name (field 2) may hold spaces
// and parentheses, so the fields are taken after its last ')'.
func Read(pid int) (Stat, error) {
	if pid <= 0 {
		return Stat{}, fmt.Errorf("procstat: pid %d: not a process", pid)
	}
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, '(')
	if i < 0 || j < 0 || j > i {
		return Stat{}, fmt.Errorf("procstat: malformed %s", path)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("procstat: short %s", path)
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: %s: ppid: %w", path, err)
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: %s: pgrp: %w", path, err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: %s: starttime: %w", path, err)
	}
	return Stat{Comm: string(b[j+1 : i]), State: f[0][0], PPID: ppid, PGRP: pgrp, StartTicks: start}, nil
}

// Running reports whether pid exists and is not a zombie (or dead).
func Running(pid int) bool {
	st, err := Read(pid)
	return err == nil && st.Live()
}

// Live reports whether the process does work: neither a zombie nor dead.
func (s Stat) Live() bool { return s.State != 'Z' && s.State != 'X' }

// bootTime is /proc/stat's btime, read once: two reads can differ by a
// second, one value keeps comparisons consistent.
var bootTime = sync.OnceValues(func() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("procstat: boot time: %w", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("procstat: boot time: %w", err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("procstat: boot time: no btime line in /proc/stat")
})

// BootTime returns the boot time in Unix seconds.
func BootTime() (uint64, error) { return bootTime() }

// StartMillis returns pid's start time in Unix milliseconds: btime ×
// 1000 + starttime × 1000 / USER_HZ, as psutil's create_time computes it.
func StartMillis(pid int) (int64, error) {
	btime, ticks, err := start(pid)
	return int64(btime)*1000 + int64(ticks)*1000/ClockTicks, err
}

// StartSecs returns pid's start time in Unix seconds, rounded down:
// btime + starttime / USER_HZ.
func StartSecs(pid int) (uint64, error) {
	btime, ticks, err := start(pid)
	return btime + ticks/ClockTicks, err
}

// start returns the boot time and pid's starttime; zeros with an error.
func start(pid int) (btime, ticks uint64, err error) {
	st, err := Read(pid)
	if err != nil {
		return 0, 0, err
	}
	if btime, err = BootTime(); err != nil {
		return 0, 0, err
	}
	return btime, st.StartTicks, nil
}

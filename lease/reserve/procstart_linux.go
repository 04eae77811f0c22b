package reserve

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat starttime; it is 100
// on every Linux ABI.
const clockTicks = 100

// ProcessStartSecs returns the start time of pid in Unix seconds:
// btime (from /proc/stat) + starttime (field 22 of /proc/<pid>/stat) /
// USER_HZ, rounded down.
func ProcessStartSecs(pid int) (uint64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reserve: process start of %d: %w", pid, err)
	}
	// The command name (field 2) may contain spaces and parentheses: the
	// fields after it start after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("reserve: process start of %d: malformed /proc/%d/stat", pid, pid)
	}
	fields := bytes.Fields(stat[i+1:])
	// fields[0] is field 3 (state); starttime is field 22.
	if len(fields) < 20 {
		return 0, fmt.Errorf("reserve: process start of %d: short /proc/%d/stat", pid, pid)
	}
	ticks, err := strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reserve: process start of %d: starttime: %w", pid, err)
	}
	btime, err := bootTime()
	if err != nil {
		return 0, err
	}
	return btime + ticks/clockTicks, nil
}

func bootTime() (uint64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("reserve: boot time: %w", err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reserve: boot time: %w", err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("reserve: boot time: no btime line in /proc/stat")
}

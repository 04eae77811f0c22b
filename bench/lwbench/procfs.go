package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuTime is the on-CPU time of every live thread of pid, from
// /proc/PID/task/*/schedstat (nanoseconds, unlike the 10 ms ticks of
// /proc/PID/stat).
func cpuTime(pid int) time.Duration {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(n)
		}
	}
	return sum
}

// statusKB returns a "VmXXX:" field of /proc/PID/status in KiB.
func statusKB(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// claimExpires reads expires_at (ms) from a claim file, 0 if absent.
func claimExpires(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "expires_at: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

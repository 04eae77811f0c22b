package kubetest

import "golang.org/x/sys/unix"

// Mono is CLOCK_MONOTONIC in nanoseconds: the same clock in every process
// on the host, so times that different processes log compare directly.
func Mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

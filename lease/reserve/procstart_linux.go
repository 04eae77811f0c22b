package reserve

import (
	"fmt"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// ProcessStartSecs is pid's start in Unix seconds: btime + starttime (field 22 of
// /proc/<pid>/stat) / USER_HZ, rounded down.
func ProcessStartSecs(pid int) (uint64, error) {
	s, err := procstat.StartSecs(pid)
	if err != nil {
		return 0, fmt.Errorf("reserve: process start of %d: %w", pid, err)
	}
	return s, nil
}

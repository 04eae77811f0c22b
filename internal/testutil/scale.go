package testutil

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ScaleEnv names a factor (a positive number, default 1) that stretches
// every test deadline, for a machine slower than the load average shows
// (an emulator, a throttled container).
const ScaleEnv = "LEASEWRAP_TEST_SCALE"

// maxLoadFactor bounds the part of the stretch that comes from the load
// average, so a test that hangs still fails in reasonable time.
const maxLoadFactor = 10

// Scale stretches d, a deadline for an event another process brings
// about, to this machine: d times $LEASEWRAP_TEST_SCALE, times the
// 1-minute load average per CPU when the machine is busier than its CPUs
// (at most 10). A deadline only bounds a wait; it never decides a result.
// The helpers of this package that take a deadline scale it themselves.
func Scale(d time.Duration) time.Duration {
	f := 1.0
	if v, err := strconv.ParseFloat(os.Getenv(ScaleEnv), 64); err == nil && v > 0 && !math.IsInf(v, 0) {
		f = v
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if load, err := strconv.ParseFloat(strings.Fields(string(b) + " x")[0], 64); err == nil {
			f *= min(max(load/float64(runtime.NumCPU()), 1), maxLoadFactor)
		}
	}
	return time.Duration(float64(d) * f)
}

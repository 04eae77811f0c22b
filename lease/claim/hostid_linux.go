package claim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// machineIDOnce caches this machine's identity: it cannot change while the
// process runs, and sweeps read many records against it.
var machineIDOnce = sync.OnceValue(readMachineID)

// readMachineID mirrors fno.claims.hostid.machine_id on Linux:
// /etc/machine-id, else /var/lib/dbus/machine-id, trimmed, plus
// ":<inode of /proc/self/ns/pid>" so containers sharing an image's
// machine-id but not a pid namespace stay distinct. "" when there is none
// (never substituted by the hostname).
func readMachineID() string {
	base := ""
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				base = v
				break
			}
		}
	}
	if base == "" {
		return ""
	}
	fi, err := os.Stat("/proc/self/ns/pid")
	if err != nil {
		return base
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return base
	}
	return fmt.Sprintf("%s:%d", base, st.Ino)
}

// systemHostname is gethostname(2); "" on failure, which never equals a
// recorded host (fails toward "not live").
func systemHostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

var bootTimeOnce = sync.OnceValues(readBootTime)

func readBootTime() (int64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// clockTicks is sysconf(_SC_CLK_TCK); 100 on every Linux ABI Go supports.
const clockTicks = 100

// processCreateTimeMs returns pid's start time in epoch milliseconds
// (btime + starttime/CLK_TCK, as psutil computes it), or false when the
// pid is gone or cannot be inspected (which reads as not live).
func processCreateTimeMs(pid int) (int64, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	start, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return 0, false
	}
	btime, ok := bootTimeOnce()
	if !ok {
		return 0, false
	}
	return btime*1000 + start*1000/clockTicks, true
}

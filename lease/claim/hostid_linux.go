package claim

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// machineIDOnce caches this machine's identity.
var machineIDOnce = sync.OnceValue(readMachineID)

// readMachineID mirrors fno.claims.hostid.machine_id: /etc/machine-id, else
// /var/lib/dbus/machine-id, trimmed, plus ":<inode of /proc/self/ns/pid>"; ""
// when none (never the hostname).
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

// systemHostname is gethostname(2); "" on failure (reads as not live).
func systemHostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// processCreateTimeMs is pid's start in epoch ms (btime + starttime/CLK_TCK, as
// psutil), false when it cannot be read (not live).
func processCreateTimeMs(pid int) (int64, bool) {
	ms, err := procstat.StartMillis(pid)
	return ms, err == nil
}

//go:build leasewrap_faults

package fault

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Enabled reports whether this binary was built with crash points.
const Enabled = true

var (
	once  sync.Once
	mu    sync.Mutex
	armed map[string]int // name → hit that fires (1 = first)
	hits  map[string]int
)

// parse reads spec (name[@N], comma-separated) into name → N.
func parse(spec string) map[string]int {
	m := map[string]int{}
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n := 1
		if i := strings.LastIndexByte(f, '@'); i >= 0 {
			v, err := strconv.Atoi(f[i+1:])
			if err != nil || v < 1 {
				continue // a malformed entry never fires
			}
			f, n = f[:i], v
		}
		m[f] = n
	}
	return m
}

// Point kills this process with SIGKILL when $LEASEWRAP_FAULT arms name
// and this is the armed hit.
func Point(name string) {
	once.Do(func() {
		armed = parse(os.Getenv(Env))
		hits = map[string]int{}
	})
	if len(armed) == 0 {
		return
	}
	mu.Lock()
	n, ok := armed[name]
	if ok {
		hits[name]++
		ok = hits[name] == n
	}
	mu.Unlock()
	if !ok {
		return
	}
	unix.Kill(os.Getpid(), unix.SIGKILL)
	select {} // never return past the point
}

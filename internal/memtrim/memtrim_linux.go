// Package memtrim gives back what a long-lived idle process keeps resident:
// the heap's free pages and its executable's read-only mappings
// (MADV_DONTNEED, which discards nothing: the pages fault back in from the
// page cache). Writable mappings are never touched; only the process's
// resident set shrinks, not the page cache (bench/LOG.md, "memtrim").
package memtrim

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"

	"golang.org/x/sys/unix"
)

// Idle trims memory as the package doc says; call it once start-up is over.
// It costs a garbage collection; errors are ignored.
func Idle() {
	debug.FreeOSMemory()
	dropReadOnlyExe()
}

// dropReadOnlyExe applies MADV_DONTNEED to every private, non-writable
// mapping of this process's own executable.
func dropReadOnlyExe() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		lo, hi, ok := readOnlyMappingOf(sc.Bytes(), exe)
		if ok {
			unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_DONTNEED)
		}
	}
}

// readOnlyMappingOf reports the range of a /proc/self/maps line if it is a
// private, non-writable mapping of path.
func readOnlyMappingOf(line []byte, path string) (lo, hi uintptr, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 6 || string(bytes.Join(f[5:], []byte(" "))) != path {
		return 0, 0, false
	}
	perms := f[1]
	if len(perms) < 4 || perms[1] != '-' || perms[3] != 'p' {
		return 0, 0, false
	}
	r := bytes.SplitN(f[0], []byte("-"), 2)
	if len(r) != 2 {
		return 0, 0, false
	}
	a, err1 := strconv.ParseUint(string(r[0]), 16, 64)
	b, err2 := strconv.ParseUint(string(r[1]), 16, 64)
	if err1 != nil || err2 != nil || b <= a {
		return 0, 0, false
	}
	return uintptr(a), uintptr(b), true
}

// Package memtrim gives back what a long-lived, mostly idle process (an
// etcd or kube sidecar holding a lease, a job guard) keeps resident but no
// longer uses: the Go heap's free pages, and the mappings of its own
// executable's read-only segments, which start-up touches almost entirely.
// Dropping those mappings (MADV_DONTNEED on private read-only file
// mappings) discards nothing: the pages stay in the page cache and fault
// back in when code on them runs again. It halves an idle etcd sidecar's
// resident set (bench/LOG.md, "memtrim").
//
// Not changed: writable mappings are never touched, and the page cache's
// copy of the executable stays charged to whichever cgroup read it first;
// only the process's resident set shrinks, and by as much as the kernel's
// fault-around lets it stay shrunk.
package memtrim

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"

	"golang.org/x/sys/unix"
)

// Idle returns the heap's free pages to the kernel and drops the mappings
// of the executable's read-only segments (see the package doc). It is
// meant to be called once, when start-up is over and the process settles
// into waiting; it costs a garbage collection and a few system calls.
// Errors are ignored: it only ever saves memory.
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

// readOnlyMappingOf parses one /proc/self/maps line ("lo-hi perms offset
// dev inode path") and reports the range of a private mapping of path
// without write permission.
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

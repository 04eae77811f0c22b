package flock

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procLocks is the kernel's table of file locks.
const procLocks = "/proc/locks"

// procLocksLimit bounds how much of /proc/locks is read.
const procLocksLimit = 1 << 20

// lockHolder finds the granted FLOCK lock on (dev, ino) in the table at path:
// the pid that took it (0: outside this pid namespace) and "exclusive" or
// "shared", skipping waiters ("->"). Any failure is !ok.
func lockHolder(path string, dev, ino uint64) (pid int, mode string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", false
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	sc := bufio.NewScanner(io.LimitReader(f, procLocksLimit))
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 6716 08:01:1234 0 EOF"
		line := sc.Bytes()
		if bytes.Contains(line, []byte("->")) || !bytes.Contains(line, []byte(want)) {
			continue
		}
		fs := strings.Fields(string(line))
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		p, err := strconv.Atoi(fs[4])
		if err != nil || p < 0 {
			p = 0
		}
		mode = "exclusive"
		if fs[3] == "READ" {
			mode = "shared"
		}
		return p, mode, true
	}
	return 0, "", false
}

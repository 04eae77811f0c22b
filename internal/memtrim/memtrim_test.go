package memtrim

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyMappingOf(t *testing.T) {
	const exe = "/usr/bin/leasewrap-etcd"
	for _, tc := range []struct {
		line   string
		lo, hi uintptr
		ok     bool
	}{
		{"00400000-00a63000 r-xp 00000000 fe:00 10510627   " + exe, 0x400000, 0xa63000, true},
		{"00a63000-011f8000 r--p 00663000 fe:00 10510627   " + exe, 0xa63000, 0x11f8000, true},
		{"011f8000-0126d000 rw-p 00df8000 fe:00 10510627   " + exe, 0, 0, false}, // the data segment: never
		{"011f8000-0126d000 r--s 00df8000 fe:00 10510627   " + exe, 0, 0, false}, // shared
		{"7f41cbe90000-7f41cc200000 rw-p 00000000 00:00 0 ", 0, 0, false},
		{"00400000-00a63000 r-xp 00000000 fe:00 1 /usr/bin/other", 0, 0, false},
		{"00400000-00a63000 r-xp 00000000 fe:00 1 " + exe + " (deleted)", 0, 0, false},
		{"garbage", 0, 0, false},
	} {
		lo, hi, ok := readOnlyMappingOf([]byte(tc.line), exe)
		if lo != tc.lo || hi != tc.hi || ok != tc.ok {
			t.Errorf("%q: want %x-%x %v, have %x-%x %v", tc.line, tc.lo, tc.hi, tc.ok, lo, hi, ok)
		}
	}
}

// rssFile is this process's RssFile in kB.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestIdleDropsTheExecutablesMappings: the resident file-backed pages
// shrink, and the program runs on (its code faults back in).
func TestIdleDropsTheExecutablesMappings(t *testing.T) {
	before := rssFile(t)
	Idle()
	after := rssFile(t)
	if after >= before {
		t.Fatalf("want RssFile below %d kB after Idle, have %d kB", before, after)
	}
	t.Logf("RssFile %d → %d kB", before, after)
	Idle() // again, and the code it runs is back
}

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestOnceRecordTooLargeIsRefusedBeforeItRuns: a command line whose
// published record cannot fit in one etcd request (three 100 000-byte "<"
// arguments: JSON escapes each "<" as six bytes, 1.8 MB against the 1.5 MiB
// default --max-request-bytes) is refused with 64 before anything is
// claimed or run. A record that fits (one such argument) runs, publishes
// and replays.
func TestOnceRecordTooLargeIsRefusedBeforeItRuns(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	ran := tmp(t, "ran")
	a := strings.Repeat("<", 100_000)
	job := []string{"sh", "-c", fmt.Sprintf("echo ran >> %s", ran), "x"}
	for i := range 2 {
		code, out := runLW(t, nil, onceArgs("big", c.Endpoints(), nil, append(job, a, a, a)...)...)
		if code != 64 || !strings.Contains(out, "--max-request-bytes") || !strings.Contains(out, "argv") {
			t.Fatalf("attempt %d: want 64 naming argv and --max-request-bytes, have %d:\n%.2000s", i, code, out)
		}
		if _, err := os.Stat(ran); !os.IsNotExist(err) {
			t.Fatalf("attempt %d: the job ran although its result could not be recorded", i)
		}
	}
	if code, out := runLW(t, nil, "once", "lookup", "big", "--endpoints", c.Endpoints()[0]); code != 1 {
		t.Fatalf("lookup after the refusals: want 1 (free, nothing claimed), have %d %s", code, out)
	}
	// One such argument (≈ 600 kB as JSON) fits: runs once, then replays.
	for i := range 2 {
		if code, out := runLW(t, nil, onceArgs("fits", c.Endpoints(), nil, append(job, a)...)...); code != 0 {
			t.Fatalf("run %d of a record that fits: want 0, have %d:\n%.2000s", i, code, out)
		}
	}
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "ran") != 1 {
		t.Fatalf("want the fitting job run once and replayed once, have %q", b)
	}
	// A smaller server limit, given as the flag, is honoured.
	if code, out := runLW(t, nil, onceArgs("small", c.Endpoints(), []string{"--max-request-bytes", "100000"}, append(job, a)...)...); code != 64 {
		t.Fatalf("--max-request-bytes 100000: want 64, have %d:\n%.2000s", code, out)
	}
}

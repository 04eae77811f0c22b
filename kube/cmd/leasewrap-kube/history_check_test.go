package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHistoryCheckerCatches feeds the history checker logs in the job's
// format with one known defect each: it must name it (and measure the
// overlap it was given), so a clean TestKubeHistory means something.
func TestHistoryCheckerCatches(t *testing.T) {
	for _, c := range []struct {
		name    string
		log     string
		counter int64
		want    string // a violation containing this; "" none
		overlap time.Duration
	}{
		{"clean", "start 1000 1 10 9 w 0\ninc 1 1\nend 2000 1 0\nstart 3000 2 11 9 w 0\ninc 2 2\nend 4000 2 0\n", 2, "", 0},
		{"overlap", "start 1000 1 10 9 w 0\ninc 1 1\nstart 1500 2 11 9 w 0\ninc 2 2\nend 2000 1 0\nend 4000 2 0\n", 2, "", 500},
		{"stale write accepted", "start 1000 2 10 9 w 0\ninc 1 2\nend 2000 2 0\nstart 3000 3 11 9 w 0\ninc 2 1\nend 4000 3 0\n", 2, "stale fence accepted", 0},
		{"lost write", "start 1000 1 10 9 w 0\ninc 1 1\nend 2000 1 0\n", 2, "lost writes", 0},
		{"one fence twice", "start 1000 1 10 9 w 0\nend 2000 1 0\nstart 3000 1 11 9 e 0\nend 4000 1 0\n", 0, "two jobs ran under fence 1", 0},
		{"fence going down", "start 1000 5 10 9 w 0\nend 2000 5 0\nstart 3000 4 11 9 e 0\nend 4000 4 0\n", 0, "fences do not grow", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs")
			if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
				t.Fatal(err)
			}
			bad, worst := readJobLog(t, path).violations(c.counter, nil, 10000)
			if c.want == "" && len(bad) > 0 {
				t.Errorf("want no violation, have %q", bad)
			}
			if c.want != "" && !strings.Contains(strings.Join(bad, "\n"), c.want) {
				t.Errorf("want a violation %q, have %q", c.want, bad)
			}
			if worst != c.overlap {
				t.Errorf("overlap: want %v, have %v", c.overlap, worst)
			}
		})
	}
}

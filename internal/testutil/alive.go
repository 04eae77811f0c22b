package testutil

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// AliveJob is a shell job that appends "<name> <unix ns>" to hist every
// 20 ms, n times (forever when n < 0): a history the test reads back to
// tell whether two holders' jobs overlapped. Stubborn ignores SIGTERM
// (the job then dies only of SIGKILL, or of another stop signal).
func AliveJob(hist, name string, stubborn bool, n int) string {
	s := `i=0; while [ $i -ne ` + strconv.Itoa(n) + ` ]; do echo "` + name + ` $(date +%s%N)" >> ` + hist + `; i=$((i+1)); sleep 0.02; done`
	if stubborn {
		s = `trap "" TERM; ` + s
	}
	return s
}

// AliveHistory reads what AliveJob wrote to path: for each name, the
// first and the last instant it was seen alive.
func AliveHistory(t testing.TB, path string) (first, last map[string]time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, last = map[string]time.Time{}, map[string]time.Time{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, ns, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if !ok || err != nil {
			continue // a line cut short by SIGKILL
		}
		at := time.Unix(0, n)
		if _, seen := first[name]; !seen {
			first[name] = at
		}
		last[name] = at
	}
	return first, last
}

// NoOverlap fails the test unless the job recorded as before was dead
// before the one recorded as after started, as AliveHistory read them.
func NoOverlap(t testing.TB, hist, before, after string) {
	t.Helper()
	first, last := AliveHistory(t, hist)
	b, ok := first[after]
	if !ok {
		t.Fatalf("%s's job never ran", after)
	}
	if a := last[before]; !a.Before(b) {
		t.Fatalf("overlap: %s's job was alive %v after %s's started", before, a.Sub(b), after)
	}
}

package test

import (
	"bufio"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// job is one run of the test job, read back from the history.
type job struct {
	fence      *big.Int
	start, end int64 // CLOCK_MONOTONIC ns; end 0 = not logged (killed)
	pid, ppid  int
}

// history is what the jobs logged.
type history struct {
	jobs    []*job
	incs    int
	stale   []string
	noFence int
	errs    []string
}

func readHistory(t testing.TB, path string) *history {
	t.Helper()
	h := &history{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return h
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byFence := map[string]*job{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		num := func(i int) int64 { n, _ := strconv.ParseInt(fs[i], 10, 64); return n }
		switch fs[0] {
		case "start":
			fence, ok := new(big.Int).SetString(fs[2], 10)
			if !ok {
				h.errs = append(h.errs, "LEASEWRAP_FENCE is not an integer: "+fs[2])
				continue
			}
			j := &job{fence: fence, start: num(1), pid: int(num(3)), ppid: int(num(4))}
			h.jobs = append(h.jobs, j)
			byFence[fs[2]] = j
		case "end":
			if j := byFence[fs[2]]; j != nil {
				j.end = num(1)
			}
		case "inc":
			h.incs++
		case "stale":
			h.stale = append(h.stale, fs[1])
		case "nofence":
			h.noFence++
		case "incerr":
			h.errs = append(h.errs, "the job's fenced write failed: "+strings.Join(fs[1:], " "))
		}
	}
	sort.Slice(h.jobs, func(i, k int) bool { return h.jobs[i].start < h.jobs[k].start })
	return h
}

// violations checks the history: want jobs ran (want < 0: any number),
// none without a fence, no two under one fence, fences growing strictly in
// start order, each job over before the next started, and, when counter
// >= 0, every fenced write applied. A job killed before it logged its end
// ends when the test saw it gone (gone, by pid), else at now. It returns the
// violations and the worst overlap.
func (h *history) violations(want int, counter int64, gone map[int]int64, now int64) ([]string, time.Duration) {
	var bad []string
	bad = append(bad, h.errs...)
	if want >= 0 && len(h.jobs) != want {
		bad = append(bad, fmt.Sprintf("want %d jobs run, have %d", want, len(h.jobs)))
	}
	if h.noFence > 0 {
		bad = append(bad, fmt.Sprintf("%d jobs ran without LEASEWRAP_FENCE", h.noFence))
	}
	seen := map[string]bool{}
	for i, j := range h.jobs {
		if seen[j.fence.String()] {
			bad = append(bad, fmt.Sprintf("two jobs ran under fence %s", j.fence))
		}
		seen[j.fence.String()] = true
		if i > 0 && j.fence.Cmp(h.jobs[i-1].fence) <= 0 {
			bad = append(bad, fmt.Sprintf("fences do not grow: fence %s started after fence %s", j.fence, h.jobs[i-1].fence))
		}
	}
	var worst time.Duration
	for i, a := range h.jobs {
		end := a.end
		if end == 0 {
			end = gone[a.pid]
		}
		if end == 0 {
			end = now
		}
		for _, b := range h.jobs[i+1:] {
			if ov := time.Duration(end - b.start); ov > 0 {
				bad = append(bad, fmt.Sprintf("jobs overlap by %v: fence %s (pid %d) still ran when fence %s (pid %d) started", ov, a.fence, a.pid, b.fence, b.pid))
				worst = max(worst, ov)
			}
		}
	}
	if counter >= 0 {
		if len(h.stale) > 0 {
			bad = append(bad, fmt.Sprintf("stale fence refused by the fenced write: %v", h.stale))
		}
		if counter != int64(h.incs) {
			bad = append(bad, fmt.Sprintf("lost writes: counter %d, %d increments logged", counter, h.incs))
		}
	}
	return bad, worst
}

// check fails t with every violation.
func (h *history) check(t testing.TB, want int, counter int64, gone map[int]int64) {
	t.Helper()
	bad, _ := h.violations(want, counter, gone, monoNow())
	for _, b := range bad {
		t.Error(b)
	}
}

// watchGone records when the job of pid is seen gone (a zombie counts):
// the end of a job that was killed before it could log one. Polling every
// 2 ms makes the recorded end late, never early.
func watchGone(t testing.TB, pid int, within time.Duration) int64 {
	t.Helper()
	deadline := time.Now().Add(within)
	for procstat.Running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("job pid %d still alive %v later", pid, within)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return monoNow()
}

// TestHistoryCheckerCatches feeds the checker histories with one known
// defect each: it must name it, so a clean history means something.
func TestHistoryCheckerCatches(t *testing.T) {
	for _, c := range []struct {
		name    string
		log     string
		want    int
		counter int64
		gone    map[int]int64
		viol    string // a violation containing this; "" none
		overlap time.Duration
	}{
		{"clean", "start 1000 1 10 9\ninc 1 1\nend 2000 1\nstart 3000 2 11 9\ninc 2 2\nend 4000 2\n", 2, 2, nil, "", 0},
		{"big fences", "start 1000 8589934592001 10 9\nend 2000 8589934592001\nstart 3000 12884901888001 11 9\nend 4000 12884901888001\n", 2, -1, nil, "", 0},
		{"overlap", "start 1000 1 10 9\nstart 1500 2 11 9\nend 2000 1\nend 4000 2\n", 2, -1, nil, "jobs overlap by 500ns", 500},
		{"killed job seen gone late", "start 1000 1 10 9\nstart 3000 2 11 9\nend 4000 2\n", 2, -1, map[int]int64{10: 3500}, "jobs overlap by 500ns", 500},
		{"killed job gone in time", "start 1000 1 10 9\nstart 3000 2 11 9\nend 4000 2\n", 2, -1, map[int]int64{10: 2500}, "", 0},
		{"job missing", "start 1000 1 10 9\nend 2000 1\n", 2, -1, nil, "want 2 jobs run, have 1", 0},
		{"one fence twice", "start 1000 1 10 9\nend 2000 1\nstart 3000 1 11 9\nend 4000 1\n", 2, -1, nil, "two jobs ran under fence 1", 0},
		{"fence going down", "start 1000 5 10 9\nend 2000 5\nstart 3000 4 11 9\nend 4000 4\n", 2, -1, nil, "fences do not grow", 0},
		{"stale write", "start 1000 5 10 9\ninc 1 5\nend 2000 5\nstart 3000 6 11 9\nstale 6\nend 4000 6\n", 2, 1, nil, "stale fence", 0},
		{"lost write", "start 1000 1 10 9\ninc 1 1\nend 2000 1\n", 1, 2, nil, "lost writes", 0},
		{"no fence", "nofence 1000 10\n", 0, -1, nil, "without LEASEWRAP_FENCE", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := tmp(t, "history")
			if err := os.WriteFile(path, []byte(c.log), 0o644); err != nil {
				t.Fatal(err)
			}
			bad, worst := readHistory(t, path).violations(c.want, c.counter, c.gone, 10000)
			if c.viol == "" && len(bad) > 0 {
				t.Errorf("want no violation, have %q", bad)
			}
			if c.viol != "" && !strings.Contains(strings.Join(bad, "\n"), c.viol) {
				t.Errorf("want a violation %q, have %q", c.viol, bad)
			}
			if worst != c.overlap {
				t.Errorf("overlap: want %v, have %v", c.overlap, worst)
			}
		})
	}
}

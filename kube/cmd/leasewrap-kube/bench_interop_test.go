//go:build kubebench

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// TestKubeBench measures leasewrap-kube against client-go's LeaderElector
// on one real API server in one run, and prints medians: takeover after
// the holder's SIGKILL, hand-over on release, the wall time of
// `kube run -- true`, API requests per second of an idle holder (from the
// API server's audit log) and the memory of one holder. It is built only
// with -tags kubebench (make bench-kube), so a test run never lists it as
// skipped; KUBE_BENCH_N sets the runs per figure (default 5). It prints
// numbers and asserts nothing about them.
func TestKubeBench(t *testing.T) {
	n := 5
	if v, err := strconv.Atoi(os.Getenv("KUBE_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	s := kubetest.Start(t)
	b := build(t)
	report := func(what, who string, ds []time.Duration) {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		var ms []string
		for _, d := range ds {
			ms = append(ms, strconv.FormatInt(d.Milliseconds(), 10))
		}
		fmt.Printf("bench %-34s %-10s median_ms %6d  runs_ms [%s]\n", what, who, ds[len(ds)/2].Milliseconds(), strings.Join(ms, " "))
	}
	// client-go's defaults for both: lease duration 15 s, elector renew
	// deadline 10 s and retry period 2 s, leasewrap's renewal every 5 s.
	electorDefaults := []string{"--lease-duration", "15s", "--renew-deadline", "10s", "--retry-period", "2s"}
	seq := 0
	lease := func(what string) string { seq++; return fmt.Sprintf("bench-%s-%d", what, seq) }

	// Takeover after the holder's SIGKILL (lease duration 15 s).
	var lwKill, elKill []time.Duration
	for range n {
		name := lease("kill")
		log := filepath.Join(t.TempDir(), "jobs")
		h := wrap(t, b, s, kubetest.Runner, name, nil, envJob(s, log, time.Hour, ""), b.elector, "job")
		waitJobs(t, log, 1, time.Minute)
		w := wrap(t, b, s, kubetest.Runner, name, []string{"--wait", "2m"}, envJob(s, log, 0, ""), b.elector, "job")
		time.Sleep(2 * time.Second) // the waiter watches
		killed := kubetest.Mono()
		syscall.Kill(-h.Cmd.Process.Pid, syscall.SIGKILL)
		j := waitJobs(t, log, 2, 2*time.Minute).jobs[1]
		lwKill = append(lwKill, time.Duration(j.start-killed))
		w.wait(t, time.Minute)

		name = lease("kill-el")
		e1 := elect(t, b, s, name, "e1", electorDefaults...)
		e1.event(t, "started-leading", time.Minute)
		e2 := elect(t, b, s, name, "e2", electorDefaults...)
		time.Sleep(2 * time.Second)
		killed = kubetest.Mono()
		e1.Cmd.Process.Kill()
		ev := e2.event(t, "started-leading", 2*time.Minute)
		elKill = append(elKill, time.Duration(ev.Mono-killed))
		e2.Cmd.Process.Signal(syscall.SIGTERM)
		e2.wait(t, time.Minute)
	}
	report("takeover_after_sigkill", "leasewrap", lwKill)
	report("takeover_after_sigkill", "client-go", elKill)

	// Hand-over on release: the holder's end to the waiter's start.
	var lwRel, elRel, elToLw, lwToEl []time.Duration
	for range n {
		name := lease("rel")
		log := filepath.Join(t.TempDir(), "jobs")
		h := wrap(t, b, s, kubetest.Runner, name, nil, envJob(s, log, 3*time.Second, ""), b.elector, "job")
		waitJobs(t, log, 1, time.Minute)
		w := wrap(t, b, s, kubetest.Runner, name, []string{"--wait", "1m"}, envJob(s, log, 0, ""), b.elector, "job")
		h.wait(t, time.Minute)
		js := waitJobs(t, log, 2, time.Minute).jobs
		lwRel = append(lwRel, time.Duration(js[1].start-js[0].end))
		w.wait(t, time.Minute)

		name = lease("rel-el")
		e1 := elect(t, b, s, name, "e1", append(electorDefaults, "--hold", "3s")...)
		e1.event(t, "started-leading", time.Minute)
		e2 := elect(t, b, s, name, "e2", electorDefaults...)
		stopped := e1.event(t, "stopped-leading", time.Minute)
		ev := e2.event(t, "started-leading", time.Minute)
		elRel = append(elRel, time.Duration(ev.Mono-stopped.Mono))
		e2.Cmd.Process.Signal(syscall.SIGTERM)
		e2.wait(t, time.Minute)

		name = lease("rel-mixed")
		e1 = elect(t, b, s, name, "e1", append(electorDefaults, "--hold", "3s")...)
		e1.event(t, "started-leading", time.Minute)
		log = filepath.Join(t.TempDir(), "jobs")
		w = wrap(t, b, s, kubetest.Runner, name, []string{"--wait", "1m"}, envJob(s, log, 3*time.Second, ""), b.elector, "job")
		stopped = e1.event(t, "stopped-leading", time.Minute)
		j := waitJobs(t, log, 1, time.Minute).jobs[0]
		elToLw = append(elToLw, time.Duration(j.start-stopped.Mono))
		e2 = elect(t, b, s, name, "e2", electorDefaults...)
		w.wait(t, time.Minute)
		j = readJobLog(t, log).jobs[0]
		ev = e2.event(t, "started-leading", time.Minute)
		lwToEl = append(lwToEl, time.Duration(ev.Mono-j.end))
		e2.Cmd.Process.Signal(syscall.SIGTERM)
		e2.wait(t, time.Minute)
	}
	report("handover_on_release", "leasewrap", lwRel)
	report("handover_on_release", "client-go", elRel)
	report("handover_client-go_to_leasewrap", "mixed", elToLw)
	report("handover_leasewrap_to_client-go", "mixed", lwToEl)

	// `kube run -- true` on a free lease, against an elector that
	// acquires, leads for 1 ns and releases.
	var lwTrue, elOnce []time.Duration
	for range 2 * n {
		start := time.Now()
		w := wrap(t, b, s, kubetest.Runner, lease("true"), nil, nil, "true")
		if code := w.wait(t, time.Minute); code != 0 {
			t.Fatalf("kube run -- true: %d:\n%s", code, w.output())
		}
		lwTrue = append(lwTrue, w.Ended().Sub(start))
		start = time.Now()
		e := elect(t, b, s, lease("once"), "e", append(electorDefaults, "--hold", "1ns")...)
		e.wait(t, time.Minute)
		elOnce = append(elOnce, e.Ended().Sub(start))
	}
	report("run_true_wall", "leasewrap", lwTrue)
	report("acquire_release_wall", "client-go", elOnce)

	// Idle holders: K of each on leases of their own for a window;
	// requests counted in the audit log (user leasewrap-runner, leases).
	const k, window = 10, 30 * time.Second
	for _, who := range []string{"leasewrap", "client-go"} {
		var ps []*kproc
		for i := range k {
			name := lease("idle")
			if who == "leasewrap" {
				log := filepath.Join(t.TempDir(), "jobs")
				ps = append(ps, wrap(t, b, s, kubetest.Runner, name, nil, envJob(s, log, time.Hour, ""), b.elector, "job"))
				waitJobs(t, log, 1, time.Minute)
			} else {
				e := elect(t, b, s, name, fmt.Sprintf("idle-%d", i), electorDefaults...)
				e.event(t, "started-leading", time.Minute)
				ps = append(ps, e)
			}
		}
		time.Sleep(5 * time.Second) // past the start-up requests
		from := time.Now()
		time.Sleep(window)
		to := time.Now()
		reqs := countAudit(t, s.AuditLog, string(kubetest.Runner), from, to)
		rate := float64(reqs) / float64(k) / to.Sub(from).Seconds()
		rss := rssKB(ps[0].Cmd.Process.Pid)
		group := treeRSSKB(ps[0].Cmd.Process.Pid, who == "leasewrap")
		fmt.Printf("bench %-34s %-10s %.3f req/s per holder (%d requests, %d holders, %v); 1000 holders: %.0f req/s\n",
			"idle_api_requests", who, rate, reqs, k, to.Sub(from).Round(time.Second), rate*1000)
		fmt.Printf("bench %-34s %-10s %d kB (process), %d kB (with its helpers, job excluded)\n", "idle_rss", who, rss, group)
		for _, p := range ps {
			p.Cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range ps {
			p.wait(t, time.Minute)
		}
	}
}

// countAudit counts the completed requests on leases by user whose
// requestReceivedTimestamp lies in [from, to).
func countAudit(t *testing.T, path, user string, from, to time.Time) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Stage     string                     `json:"stage"`
			Received  time.Time                  `json:"requestReceivedTimestamp"`
			User      struct{ Username string }  `json:"user"`
			ObjectRef *struct{ Resource string } `json:"objectRef"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.User.Username != user || ev.ObjectRef == nil || ev.ObjectRef.Resource != "leases" {
			continue
		}
		if ev.Stage == "ResponseComplete" && !ev.Received.Before(from) && ev.Received.Before(to) {
			n++
		}
	}
	return n
}

// rssKB is VmRSS of pid in kB.
func rssKB(pid int) int { return status(pid, "VmRSS:") }

// treeRSSKB sums VmRSS over pid and its descendants, leaving out the test
// job (`elector job`) when skipJob: leasewrap-kube with its job guard.
func treeRSSKB(pid int, skipJob bool) int {
	total := 0
	for _, p := range tree(pid) {
		argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if a := strings.Split(string(argv), "\x00"); skipJob && len(a) > 1 && filepath.Base(a[0]) == "elector" && a[1] == "job" {
			continue
		}
		total += rssKB(p)
	}
	return total
}

// waitJobs waits up to d until n jobs have started and returns the log.
func waitJobs(t *testing.T, path string, n int, d time.Duration) *jobLog {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		h := readJobLog(t, path)
		if len(h.jobs) >= n {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs started within %v, want %d", len(h.jobs), d, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

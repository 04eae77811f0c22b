//go:build pgbench

package test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// pollEvery is the poll interval of the two baselines: the longest
// back-off step of leasewrap's own waiters (supervisor: 2 ms doubling to
// 250 ms) when no NOTIFY wakes them.
const pollEvery = 250 * time.Millisecond

// TestPGBench measures the pg kind (go test -tags pgbench, run by
// pg/scripts/bench.sh): hand-over against an advisory-lock polling loop
// and ShedLock's statements, takeover after SIGKILL, statements per
// renewal and per idle minute, and the idle memory of every process
// leasewrap adds. It prints a Markdown report (and writes it to
// $PG_BENCH_OUT).
func TestPGBench(t *testing.T) {
	n := envInt("PG_BENCH_N", 15)
	bin := buildRelease(t)
	srv := pgtest.Start(t, pgtest.Setting("shared_preload_libraries", "pg_stat_statements"),
		pgtest.Setting("pg_stat_statements.track", "all"))
	srv.Exec(t, "create extension pg_stat_statements")
	var rep strings.Builder
	fmt.Fprintf(&rep, "PostgreSQL %s on 127.0.0.1, %d rounds each; poll interval of the baselines %v.\n\n", serverVersion(t, srv), n, pollEvery)

	fmt.Fprintf(&rep, "| hand-over (holder's job ends → next job starts) | p50 | p95 |\n| --- | --- | --- |\n")
	for _, c := range []struct {
		name string
		f    func(i int) time.Duration
	}{
		{"leasewrap pg run (LISTEN/NOTIFY)", func(i int) time.Duration { return lwHandover(t, bin, srv, i, nil) }},
		{"leasewrap pg run --no-notify (polling with back-off)", func(i int) time.Duration { return lwHandover(t, bin, srv, i, []string{"--no-notify"}) }},
		{"pg_try_advisory_lock polling loop", func(i int) time.Duration { return advisoryHandover(t, srv) }},
		{"ShedLock statements polling loop", func(i int) time.Duration { return shedlockHandover(t, srv) }},
	} {
		var ds []time.Duration
		for i := range n {
			ds = append(ds, c.f(i))
		}
		fmt.Fprintf(&rep, "| %s | %s | %s |\n", c.name, ms(pct(ds, 50)), ms(pct(ds, 95)))
	}

	var tk []time.Duration
	for i := range min(n, 5) {
		tk = append(tk, lwTakeover(t, bin, srv, i))
	}
	fmt.Fprintf(&rep, "\nTakeover after SIGKILL of the holder (--ttl 4s --kill-grace 1s; target ≤ TTL + 1 s): p50 %s, max %s over %d rounds.\n", ms(pct(tk, 50)), ms(pct(tk, 100)), len(tk))

	statements(t, bin, srv, &rep)
	fmt.Println(rep.String())
	if out := os.Getenv("PG_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(rep.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// buildRelease builds leasewrap and leasewrap-pg side by side as make does
// (static, stripped), so `leasewrap pg` runs the pair users install.
func buildRelease(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, pkg := range []string{"./cmd/leasewrap", "./pg/cmd/leasewrap-pg"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", dir+"/", pkg)
		cmd.Dir = moduleRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "leasewrap")
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func startExe(t testing.TB, exe string, env []string, args ...string) *wrapper {
	t.Helper()
	w := &wrapper{}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	w.Group = testutil.StartGroup(t, cmd)
	return w
}

// lwHandover: a holder whose job runs 700 ms and a waiter queued behind
// it; the gap between the holder's job's end and the waiter's job's start.
func lwHandover(t *testing.T, bin string, srv *pgtest.Server, i int, extra []string) time.Duration {
	hist := tmp(t, "h")
	name := fmt.Sprintf("handover-%d-%d", len(extra), i)
	args := func() []string {
		return runArgs(name, srv.DSN(), append([]string{"--ttl", "10s", "--wait", "30s"}, extra...)...)
	}
	h := startExe(t, bin, jobEnv(hist, 700*time.Millisecond), args()...)
	waitJobs(t, hist, 1, 30*time.Second, h)
	w := startExe(t, bin, jobEnv(hist, 0), args()...)
	for _, x := range []*wrapper{h, w} {
		if code := x.wait(t, time.Minute); code != 0 {
			t.Fatalf("hand-over wrapper exited %d:\n%s", code, x.out.String())
		}
	}
	jobs := readHistory(t, hist).jobs
	if len(jobs) != 2 || jobs[0].end == 0 {
		t.Fatalf("hand-over: want 2 jobs, have %d", len(jobs))
	}
	return time.Duration(jobs[1].start - jobs[0].end)
}

func connect(t *testing.T, srv *pgtest.Server) *pgx.Conn {
	return pgtest.Connect(t, srv.DSN())
}

// advisoryHandover: a session holds pg_advisory_lock for 700 ms and
// unlocks; another polls pg_try_advisory_lock every pollEvery.
func advisoryHandover(t *testing.T, srv *pgtest.Server) time.Duration {
	ctx := context.Background()
	a, b := connect(t, srv), connect(t, srv)
	defer a.Close(ctx) // max_connections: not one pair per round until the end
	defer b.Close(ctx)
	if _, err := a.Exec(ctx, "select pg_advisory_lock(42)"); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	time.AfterFunc(700*time.Millisecond, func() {
		end := time.Now()
		a.Exec(ctx, "select pg_advisory_unlock(42)")
		ended <- end
	})
	time.Sleep(rand.N(pollEvery)) // a poller's phase is random
	for {
		var ok bool
		if err := b.QueryRow(ctx, "select pg_try_advisory_lock(42)").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			got := time.Now()
			b.Exec(ctx, "select pg_advisory_unlock(42)")
			return got.Sub(<-ended)
		}
		time.Sleep(pollEvery)
	}
}

// ShedLock's PostgreSQL statements with database time
// (usingDbTime()): lock is one INSERT … ON CONFLICT DO UPDATE … WHERE the
// lock expired; unlock sets lock_until to now (lockAtLeastFor 0).
const (
	shedDDL  = "create table if not exists shedlock (name varchar(64) primary key, lock_until timestamp not null, locked_at timestamp not null, locked_by varchar(255) not null)"
	shedLock = `INSERT INTO shedlock(name, lock_until, locked_at, locked_by) VALUES($1, timezone('utc', CURRENT_TIMESTAMP) + cast($2 as interval), timezone('utc', CURRENT_TIMESTAMP), $3)
		ON CONFLICT (name) DO UPDATE SET lock_until = timezone('utc', CURRENT_TIMESTAMP) + cast($2 as interval), locked_at = timezone('utc', CURRENT_TIMESTAMP), locked_by = $3
		WHERE shedlock.name = $1 AND shedlock.lock_until <= timezone('utc', CURRENT_TIMESTAMP)`
	shedUnlock = `UPDATE shedlock SET lock_until = GREATEST(locked_at, timezone('utc', CURRENT_TIMESTAMP)) WHERE name = $1 AND locked_by = $2`
)

func shedlockHandover(t *testing.T, srv *pgtest.Server) time.Duration {
	ctx := context.Background()
	a, b := connect(t, srv), connect(t, srv)
	defer a.Close(ctx) // max_connections: not one pair per round until the end
	defer b.Close(ctx)
	if _, err := a.Exec(ctx, shedDDL); err != nil {
		t.Fatal(err)
	}
	lock := func(c *pgx.Conn, who string) bool {
		tag, err := c.Exec(ctx, shedLock, "job", "30 seconds", who)
		if err != nil {
			t.Fatal(err)
		}
		return tag.RowsAffected() == 1
	}
	if !lock(a, "a") {
		t.Fatal("shedlock: the first lock failed")
	}
	ended := make(chan time.Time, 1)
	time.AfterFunc(700*time.Millisecond, func() {
		end := time.Now()
		a.Exec(ctx, shedUnlock, "job", "a")
		ended <- end
	})
	time.Sleep(rand.N(pollEvery)) // a poller's phase is random
	for !lock(b, "b") {
		time.Sleep(pollEvery)
	}
	got := time.Now()
	b.Exec(ctx, shedUnlock, "job", "b")
	return got.Sub(<-ended)
}

// lwTakeover: SIGKILL of a holder (the wrapper alone) to its waiter's job
// start.
func lwTakeover(t *testing.T, bin string, srv *pgtest.Server, i int) time.Duration {
	hist := tmp(t, "h")
	name := fmt.Sprintf("takeover-%d", i)
	h := startExe(t, bin, jobEnv(hist, time.Minute), runArgs(name, srv.DSN(), "--ttl", "4s", "--kill-grace", "1s")...)
	waitJobs(t, hist, 1, 30*time.Second, h)
	w := startExe(t, bin, jobEnv(hist, 0), runArgs(name, srv.DSN(), "--ttl", "4s", "--kill-grace", "1s", "--wait", "30s")...)
	testutil.WaitFor(t, "the waiter to queue", pgtest.Scale(30*time.Second), func() bool { return strings.Contains(w.out.String(), "waiting") })
	killed := monoNow()
	h.Cmd.Process.Signal(syscall.SIGKILL)
	if code := w.wait(t, time.Minute); code != 0 {
		t.Fatalf("takeover waiter exited %d:\n%s", code, w.out.String())
	}
	jobs := readHistory(t, hist).jobs
	return time.Duration(jobs[len(jobs)-1].start - killed)
}

// statements counts what idle holders and waiters send (pg_stat_statements)
// and samples the memory of every process leasewrap adds.
func statements(t *testing.T, bin string, srv *pgtest.Server, rep *strings.Builder) {
	window := time.Duration(envInt("PG_BENCH_WINDOW", 30)) * time.Second
	// Renewals: a holder renewing every 500 ms.
	hist := tmp(t, "h")
	h := startExe(t, bin, jobEnv(hist, 10*time.Minute), runArgs("renew", srv.DSN(), "--ttl", "6s", "--renew-every", "500ms")...)
	waitJobs(t, hist, 1, 30*time.Second, h)
	calls := count(t, srv, 10*time.Second)
	renewals := 0
	total := 0
	for q, c := range calls {
		total += c
		if strings.Contains(q, "renewed_at") && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(q)), "UPDATE") {
			renewals += c
		}
	}
	fmt.Fprintf(rep, "\nStatements per renewal (--renew-every 500ms, 10 s, pg_stat_statements): %d statements, %d renewal UPDATEs: %.2f per renewal.\n", total, renewals, float64(total)/float64(max(renewals, 1)))
	stopGroup(h)

	// Idle holder at the defaults (--ttl 30s: a renewal every 10 s), then a
	// waiter behind it with and without NOTIFY.
	hist = tmp(t, "h")
	h = startExe(t, bin, []string{}, "pg", "run", "idle", "--dsn", srv.DSN(), "--", "sleep", "600")
	testutil.WaitFor(t, "the idle holder's job", pgtest.Scale(30*time.Second), func() bool { return len(descendants(h.Cmd.Process.Pid)) > 0 })
	time.Sleep(2 * time.Second) // past start-up
	mem := sampleRSS(t, h.Cmd.Process.Pid, window)
	hold := sum(count(t, srv, window))
	fmt.Fprintf(rep, "\n| idle, defaults (--ttl 30s) | statements per minute |\n| --- | --- |\n| holder | %.1f |\n", perMinute(hold, window))
	for _, extra := range [][]string{nil, {"--no-notify"}} {
		args := append([]string{"pg", "run", "idle", "--dsn", srv.DSN(), "--wait", "10m"}, extra...)
		w := startExe(t, bin, nil, append(args, "--", "true")...)
		time.Sleep(2 * time.Second)
		both := sum(count(t, srv, window))
		label := "waiter (LISTEN/NOTIFY)"
		if len(extra) > 0 {
			label = "waiter " + strings.Join(extra, " ")
		}
		fmt.Fprintf(rep, "| %s | %.1f |\n", label, perMinute(both-hold, window))
		stopGroup(w)
	}
	fmt.Fprintf(rep, "\nIdle memory of every process leasewrap adds (an idle holder at the defaults, the job `sleep` left out; VmRSS median over %v):\n\n| process | VmRSS |\n| --- | --- |\n", window)
	totalKB := 0
	for _, p := range mem {
		fmt.Fprintf(rep, "| %s (pid %d) | %.1f MB |\n", p.name, p.pid, float64(p.kb)/1024)
		totalKB += p.kb
	}
	fmt.Fprintf(rep, "| total | %.1f MB |\n", float64(totalKB)/1024)
	stopGroup(h)
}

func stopGroup(w *wrapper) {
	syscall.Kill(-w.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-w.Done():
	case <-time.After(20 * time.Second):
		syscall.Kill(-w.Cmd.Process.Pid, syscall.SIGKILL)
		<-w.Done()
	}
}

// count resets pg_stat_statements, waits d and returns calls per query
// (the bench's own queries left out).
func count(t *testing.T, srv *pgtest.Server, d time.Duration) map[string]int {
	srv.Exec(t, "select pg_stat_statements_reset()")
	time.Sleep(d)
	out := map[string]int{}
	for _, r := range srv.Query(t, "select query, calls from pg_stat_statements where query not like '%pg_stat_statements%'") {
		out[r[0].(string)] += int(r[1].(int64))
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

func perMinute(n int, d time.Duration) float64 { return float64(n) * float64(time.Minute) / float64(d) }

type procMem struct {
	pid  int
	name string
	kb   int
}

// sampleRSS samples every 100 ms over d the VmRSS of pid and its
// descendants other than the job (sleep), and returns each one's median.
func sampleRSS(t *testing.T, pid int, d time.Duration) []procMem {
	samples := map[int][]int{}
	names := map[int]string{}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, p := range append([]int{pid}, descendants(pid)...) {
			name, kb := status(p)
			if name == "" || name == "sleep" {
				continue
			}
			names[p] = name
			samples[p] = append(samples[p], kb)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var out []procMem
	for p, s := range samples {
		sort.Ints(s)
		out = append(out, procMem{p, names[p], s[len(s)/2]})
	}
	sort.Slice(out, func(i, k int) bool { return out[i].pid < out[k].pid })
	return out
}

// descendants lists the processes below pid (from /proc/*/stat).
func descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func status(pid int) (string, int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", 0
	}
	var name string
	var kb int
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Name:"); ok {
			name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ = strconv.Atoi(strings.Fields(v)[0])
		}
	}
	return name, kb
}

func serverVersion(t *testing.T, srv *pgtest.Server) string {
	var v string
	srv.QueryRow(t, []any{&v}, "show server_version")
	return v
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, k int) bool { return s[i] < s[k] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

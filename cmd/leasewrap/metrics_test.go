package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/internal/testutil/promtest"
)

// readProm parses a textfile with the parser node_exporter uses.
func readProm(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return promtest.Parse(t, b)
}

// promValue is the value of fam's sample whose labels include the pairs
// given as "name", "value", …; -1 when there is none.
func promValue(fams map[string]*dto.MetricFamily, fam string, labels ...string) float64 {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	v, ok := promtest.Value(fams, fam, want)
	if !ok {
		return -1
	}
	return v
}

// TestMetricsFileCountsRunsAndSkips: runs are counted by outcome, skips by
// reason, and only a run (the command ran) changes the last run's gauges.
func TestMetricsFileCountsRunsAndSkips(t *testing.T) {
	root, env := claimEnv(t)
	mf := filepath.Join(root, "job.prom")
	run := func(want int, args ...string) {
		t.Helper()
		all := append([]string{"claim", "run", "job", "--root", root, "--renew-every", "100ms", "--kill-grace", "200ms", "--metrics-file", mf, "--metrics-name", "job"}, args...)
		if have, p := runLW(t, env, all...); have != want {
			t.Fatalf("%v: want %d, have %d\n%s", args, want, have, &p.stderr)
		}
	}
	run(0, "--", "true")
	fams := readProm(t, mf)
	success := promValue(fams, metrics.NameLastSuccess, "name", "job", "kind", "claim")
	if success <= 0 || promValue(fams, metrics.NameLastFailure, "name", "job") != -1 {
		t.Fatalf("after a success: want a last success and no last failure, have %v, %v", success, promValue(fams, metrics.NameLastFailure, "name", "job"))
	}
	run(3, "--", "sh", "-c", "exit 3")
	fams = readProm(t, mf)
	w, d := promValue(fams, metrics.NameLastWait, "name", "job"), promValue(fams, metrics.NameLastDuration, "name", "job")
	if w <= 0 || w >= d {
		t.Errorf("ran: want 0 < wait < duration, have wait %v, duration %v", w, d)
	}
	lastStart := promValue(fams, metrics.NameLastStart, "name", "job")

	// A skip: another leasewrap holds the claim. The last run stands.
	ready, gone := filepath.Join(root, "ready"), filepath.Join(root, "gone")
	holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "holder's child", func() bool { return exists(ready) })
	run(cli.ExitConflict, "--", "true")
	run(cli.ExitConflict, "--wait", "200ms", "--", "true")
	fams = readProm(t, mf)
	if have := promValue(fams, metrics.NameLastExitCode, "name", "job"); have != 3 {
		t.Errorf("after skips: want the last run's exit code 3 to stand, have %v", have)
	}
	if have := promValue(fams, metrics.NameLastStart, "name", "job"); have != lastStart {
		t.Errorf("after skips: want the last run's start %v to stand, have %v", lastStart, have)
	}
	os.WriteFile(gone, nil, 0o644)
	if have := holder.wait(t); have != 0 {
		t.Fatalf("holder: want 0, have %d\n%s", have, &holder.stderr)
	}

	// Lost: the claim is replaced under a running job.
	os.Remove(ready)
	p := startLW(t, env, "claim", "run", "job", "--root", root, "--renew-every", "100ms", "--kill-grace", "200ms", "--metrics-file", mf, "--metrics-name", "job",
		"--", "sh", "-c", "touch "+ready+"; while :; do sleep 0.02; done")
	waitFor(t, "child ready", func() bool { return exists(ready) })
	if err := os.WriteFile(claimFile(root, "job"), []byte(claimYAML("job", "thief", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if have := p.wait(t); have != cli.ExitLost {
		t.Fatalf("want %d, have %d\n%s", cli.ExitLost, have, &p.stderr)
	}
	os.Remove(claimFile(root, "job"))

	// A timeout (--timeout): a run of its own outcome, 124.
	run(cli.ExitTimeout, "--timeout", "300ms", "--", "sleep", "5")
	if v := promValue(readProm(t, mf), metrics.NameLastExitCode, "name", "job"); v != cli.ExitTimeout {
		t.Errorf("after a timeout: want the last run's exit code %d, have %v", cli.ExitTimeout, v)
	}

	// An error: the command does not exist (127, nothing ran).
	run(cli.ExitNotFound, "--", filepath.Join(root, "no-such-command"))

	fams = readProm(t, mf)
	for outcome, want := range map[string]float64{"success": 1, "failure": 1, "timeout": 1, "lost": 1, "error": 1} {
		if v := promValue(fams, metrics.NameRunsTotal, "name", "job", "kind", "claim", "outcome", outcome); v != want {
			t.Errorf("runs_total{outcome=%q}: want %v, have %v", outcome, want, v)
		}
	}
	for reason, want := range map[string]float64{"held": 1, "wait_timeout": 1, "replayed": 0, "aborted": 0} {
		if v := promValue(fams, metrics.NameSkipsTotal, "name", "job", "reason", reason); v != want {
			t.Errorf("skips_total{reason=%q}: want %v, have %v", reason, want, v)
		}
	}
	if v := promValue(fams, metrics.NameLastExitCode, "name", "job"); v != cli.ExitTimeout {
		t.Errorf("want the last run's exit code %d (the timeout; the error ran nothing), have %v", cli.ExitTimeout, v)
	}
	if v := promValue(fams, metrics.NameLastSuccess, "name", "job"); v != success {
		t.Errorf("want the last success %v to stand, have %v", success, v)
	}
	if v := promValue(fams, metrics.NameLastSplay, "name", "job"); v != 0 {
		t.Errorf("without --splay: want a splay of 0, have %v", v)
	}

	// --splay: the delay is its own gauge, not part of the wait.
	run(0, "--splay", "2s", "--", "true")
	fams = readProm(t, mf)
	sp, w, d := promValue(fams, metrics.NameLastSplay, "name", "job"), promValue(fams, metrics.NameLastWait, "name", "job"), promValue(fams, metrics.NameLastDuration, "name", "job")
	if sp < 0 || sp >= 2 || w < 0 || w+sp > d {
		t.Errorf("--splay 2s: want 0 <= splay < 2 and wait + splay <= duration, have splay %v, wait %v, duration %v", sp, w, d)
	}
	if m, _ := filepath.Glob(filepath.Join(root, ".job.prom.tmp-*")); len(m) != 0 {
		t.Errorf("temp files left behind: %v", m)
	}
	if fi, _ := os.Stat(mf); fi.Mode().Perm() != 0o644 {
		t.Errorf("want mode 0644, have %v", fi.Mode())
	}
}

// TestMetricsFileSerialRunsLoseNoCount: 40 runs of one flock lease,
// started at once with --wait, so the lease makes them strictly one after
// another, each with a job of 0 ms: 40 counted. (Each run updates the file
// after it let go of the lease, while the next one already runs: before
// the update was serialized, 19 and 21 of 40 were counted.)
func TestMetricsFileSerialRunsLoseNoCount(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "job.prom")
	const n = 40
	var ps []*proc
	for range n {
		ps = append(ps, startLW(t, nil, "-q", "flock", "run", filepath.Join(dir, "job.lock"), "--wait", "2m", "--metrics-file", mf, "--", "true"))
	}
	for i, p := range ps {
		if have := p.wait(t); have != 0 {
			t.Fatalf("run %d: want 0, have %d\n%s", i, have, &p.stderr)
		}
	}
	if v := promValue(readProm(t, mf), metrics.NameRunsTotal, "name", "true", "kind", "flock", "outcome", "success"); v != n {
		t.Fatalf("want runs_total{success} %d, have %v", n, v)
	}
}

// TestMetricsFileConcurrentLeasesLoseNoCount: runs of different leases
// (no lease excludes them) update one file, and others in its directory,
// all at once: every count is there.
func TestMetricsFileConcurrentLeasesLoseNoCount(t *testing.T) {
	dir := t.TempDir()
	shared, other := filepath.Join(dir, "shared.prom"), filepath.Join(dir, "other.prom")
	const leases, rounds = 8, 3
	var wg sync.WaitGroup
	errs := make(chan string, leases*rounds*2)
	for i := range leases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for _, mf := range []string{shared, other} {
					p := startLW(t, nil, "-q", "flock", "run", filepath.Join(dir, fmt.Sprintf("l%d-%s.lock", i, filepath.Base(mf))),
						"--metrics-file", mf, "--metrics-name", fmt.Sprintf("job%d", i%2), "--", "true")
					if have := p.wait(t); have != 0 {
						errs <- fmt.Sprintf("lease %d round %d: want 0, have %d\n%s", i, r, have, &p.stderr)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, mf := range []string{shared, other} {
		fams := readProm(t, mf)
		total := 0.0
		for _, name := range []string{"job0", "job1"} {
			total += promValue(fams, metrics.NameRunsTotal, "name", name, "outcome", "success")
		}
		if total != leases*rounds {
			t.Errorf("%s: want %d runs counted, have %v", filepath.Base(mf), leases*rounds, total)
		}
	}
}

// TestMetricsFileNamePerDateKeysAddNoSeries: the README's
// reserve run "export-$(date +%F)" adds no series per date: the name is
// the command's.
func TestMetricsFileNamePerDateKeysAddNoSeries(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "export.sh")
	os.WriteFile(job, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	mf := filepath.Join(dir, "export.prom")
	for day := 1; day <= 5; day++ {
		key := fmt.Sprintf("export-2026-12-%02d", day)
		for range 2 { // the retry replays
			if have, p := runLW(t, nil, "reserve", "run", key, "--home", filepath.Join(dir, "home"), "--metrics-file", mf, "--", job); have != 0 {
				t.Fatalf("%s: want 0, have %d\n%s", key, have, &p.stderr)
			}
		}
	}
	fams := readProm(t, mf)
	if n := len(fams[metrics.NameRunsTotal].Metric); n != len(metrics.Outcomes) {
		t.Errorf("want one name's %d runs_total series, have %d", len(metrics.Outcomes), n)
	}
	if v := promValue(fams, metrics.NameRunsTotal, "name", "export.sh", "kind", "reservation", "outcome", "success"); v != 5 {
		t.Errorf("want 5 runs, have %v", v)
	}
	if v := promValue(fams, metrics.NameSkipsTotal, "name", "export.sh", "reason", "replayed"); v != 5 {
		t.Errorf("want 5 replays, have %v", v)
	}
}

// TestMetricsFileProblemNeverCostsTheRun: whatever is wrong with the file
// or its directory at run time, the job runs and its exit code stands; one
// ERROR line (under -q too) says what is wrong, and what is at the path
// is left as it is.
func TestMetricsFileProblemNeverCostsTheRun(t *testing.T) {
	dir := t.TempDir()
	sticky := filepath.Join(dir, "tmp")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o1777)
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	planted := filepath.Join(sticky, "job.prom")
	os.WriteFile(planted, []byte(metrics.Marker+"\n"+`leasewrap_runs_total{name="/etc/shadow",outcome="success"} 999999`+"\n"), 0o644)
	if err := os.Chown(planted, 65534, 65534); err != nil {
		t.Fatalf("chown (these tests run as root in CI): %v", err)
	}
	ourContent := func() string {
		p := filepath.Join(t.TempDir(), "x.prom")
		if have, pr := runLW(t, nil, "flock", "run", filepath.Join(dir, "x.lock"), "--metrics-file", p, "--", "true"); have != 0 {
			t.Fatalf("%d\n%s", have, &pr.stderr)
		}
		return string(must(os.ReadFile(p)))
	}()
	target := write("target", "precious\n", 0o644)
	link := filepath.Join(dir, "link.prom")
	os.Symlink(target, link)
	subdir := filepath.Join(dir, "subdir.prom")
	os.Mkdir(subdir, 0o755)
	for name, tc := range map[string]struct{ path, want string }{
		"no directory":   {filepath.Join(dir, "nodir", "x.prom"), "does not exist; create it"},
		"a directory":    {subdir, "is a directory; name a file in it"},
		"a device":       {"/dev/null", "is a device"},
		"a symlink":      {link, "is a symlink"},
		"planted":        {planted, "is owned by uid 65534"},
		"other metrics":  {write("node.prom", "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\n", 0o644), "not a textfile leasewrap wrote"},
		"no marker":      {write("old.prom", strings.SplitN(ourContent, "\n", 2)[1], 0o644), "no leasewrap marker"},
		"group-writable": {write("gw.prom", ourContent, 0o664), "writable by others"},
	} {
		t.Run(name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			ran := filepath.Join(t.TempDir(), "ran")
			have, p := runLW(t, nil, "-q", "flock", "run", filepath.Join(dir, "job.lock"), "--metrics-file", tc.path, "--", "sh", "-c", "touch "+ran+"; exit 3")
			if have != 3 || !exists(ran) {
				t.Fatalf("want the job run and its 3, have %d (ran %v)\n%s", have, exists(ran), &p.stderr)
			}
			if s := p.stderr.String(); !strings.Contains(s, "ERR") || !strings.Contains(s, tc.want) {
				t.Fatalf("want an ERROR line with %q under -q, have\n%s", tc.want, s)
			}
			if after, _ := os.ReadFile(tc.path); string(after) != string(before) {
				t.Errorf("what is at the path changed: %q → %q", before, after)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("symlink target changed: %q", b)
	}

	// Only a malformed flag is refused up front (64, nothing runs).
	for _, args := range [][]string{
		{"--metrics-file", subdir + "/"},
		{"--metrics-file", subdir + "/."},
		{"--metrics-file", filepath.Join(dir, "x.prom"), "--metrics-name", "a\nb"},
		{"--metrics-name", "x"},
	} {
		ran := filepath.Join(t.TempDir(), "ran")
		all := append(append([]string{"flock", "run", filepath.Join(dir, "job.lock")}, args...), "--", "touch", ran)
		if have, p := runLW(t, nil, all...); have != cli.ExitUsage || exists(ran) {
			t.Errorf("%q: want %d and nothing run, have %d (ran %v)\n%s", args, cli.ExitUsage, have, exists(ran), &p.stderr)
		}
	}
}

// TestMetricsFileRecordsARefusedCommandLine: a run verb refused after its
// flags were read (here a TTL outside the protocol's bounds) still counts
// as an error in its metrics file; no run's gauges are written.
func TestMetricsFileRecordsARefusedCommandLine(t *testing.T) {
	root, env := claimEnv(t)
	mf := filepath.Join(root, "job.prom")
	if have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--ttl", "5s", "--metrics-file", mf, "--", "true"); have != cli.ExitUsage {
		t.Fatalf("want %d, have %d\n%s", cli.ExitUsage, have, &p.stderr)
	}
	fams := readProm(t, mf)
	if v := promValue(fams, metrics.NameRunsTotal, "name", "true", "outcome", "error"); v != 1 {
		t.Errorf("want runs_total{error} 1, have %v", v)
	}
	if v := promValue(fams, metrics.NameLastFailure, "name", "true"); v <= 0 {
		t.Errorf("want a last failure, have %v", v)
	}
	if v := promValue(fams, metrics.NameLastExitCode, "name", "true"); v != -1 {
		t.Errorf("want no last run (nothing ran), have exit code %v", v)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/leasewrap/leasewrap/cli"
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

func TestMetricsFileCountsEveryOutcomeAcrossRuns(t *testing.T) {
	root, env := claimEnv(t)
	mf := filepath.Join(root, "job.prom")
	run := func(want int, args ...string) {
		t.Helper()
		all := append([]string{"claim", "run", "job", "--root", root, "--renew-every", "100ms", "--kill-grace", "200ms", "--metrics-file", mf}, args...)
		if have, p := runLW(t, env, all...); have != want {
			t.Fatalf("%v: want %d, have %d\n%s", args, want, have, &p.stderr)
		}
	}
	run(0, "--", "true")
	run(3, "--", "sh", "-c", "exit 3")
	fams := readProm(t, mf)
	// Acquired: it waited for part of the run only.
	w, _ := promtest.Value(fams, "leasewrap_last_wait_seconds", map[string]string{"key": "job"})
	d, _ := promtest.Value(fams, "leasewrap_last_run_duration_seconds", map[string]string{"key": "job"})
	if w <= 0 || w >= d {
		t.Errorf("ran: want 0 < wait < duration, have wait %v, duration %v", w, d)
	}
	labels := func(outcome string) map[string]string {
		return map[string]string{"kind": "claim", "key": "job", "outcome": outcome}
	}
	if v, _ := promtest.Value(fams, "leasewrap_runs_total", labels("ran")); v != 2 {
		t.Fatalf("after two runs: want runs_total{ran} 2, have %v", v)
	}
	if v, _ := promtest.Value(fams, "leasewrap_last_exit_code", labels("")); v != 3 {
		t.Fatalf("want last exit code 3, have %v", v)
	}
	for _, g := range []string{"leasewrap_last_run_duration_seconds", "leasewrap_last_run_start_timestamp_seconds", "leasewrap_last_wait_seconds"} {
		if _, ok := promtest.Value(fams, g, map[string]string{"kind": "claim", "key": "job"}); !ok {
			t.Errorf("no %s", g)
		}
	}

	// A conflict: another leasewrap holds the claim.
	ready, gone := filepath.Join(root, "ready"), filepath.Join(root, "gone")
	holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "holder's child", func() bool { return exists(ready) })
	run(cli.ExitConflict, "--", "true")
	// Never acquired: it waited for the whole run.
	fams = readProm(t, mf)
	w, _ = promtest.Value(fams, "leasewrap_last_wait_seconds", labels(""))
	d, _ = promtest.Value(fams, "leasewrap_last_run_duration_seconds", labels(""))
	if w != d || d <= 0 {
		t.Errorf("conflict: want wait = duration > 0, have wait %v, duration %v", w, d)
	}
	os.WriteFile(gone, nil, 0o644)
	if have := holder.wait(t); have != 0 {
		t.Fatalf("holder: want 0, have %d\n%s", have, &holder.stderr)
	}

	// Lost: the claim is replaced under a running job.
	os.Remove(ready)
	p := startLW(t, env, "claim", "run", "job", "--root", root, "--renew-every", "100ms", "--kill-grace", "200ms", "--metrics-file", mf,
		"--", "sh", "-c", "touch "+ready+"; while :; do sleep 0.02; done")
	waitFor(t, "child ready", func() bool { return exists(ready) })
	if err := os.WriteFile(claimFile(root, "job"), []byte(claimYAML("job", "thief", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if have := p.wait(t); have != cli.ExitLost {
		t.Fatalf("want %d, have %d\n%s", cli.ExitLost, have, &p.stderr)
	}
	os.Remove(claimFile(root, "job"))

	// An error: the command does not exist (127, nothing ran).
	run(cli.ExitNotFound, "--", filepath.Join(root, "no-such-command"))

	fams = readProm(t, mf)
	for outcome, want := range map[string]float64{"ran": 2, "conflict": 1, "lost": 1, "error": 1, "replayed": 0} {
		if v, ok := promtest.Value(fams, "leasewrap_runs_total", labels(outcome)); !ok || v != want {
			t.Errorf("runs_total{outcome=%q}: want %v, have %v (present %v)", outcome, want, v, ok)
		}
	}
	if v, _ := promtest.Value(fams, "leasewrap_last_exit_code", labels("")); v != cli.ExitNotFound {
		t.Errorf("want last exit code %d, have %v", cli.ExitNotFound, v)
	}
	if fams["leasewrap_runs_total"].GetType() != dto.MetricType_COUNTER {
		t.Errorf("runs_total is a %v", fams["leasewrap_runs_total"].GetType())
	}
	if m, _ := filepath.Glob(filepath.Join(root, ".job.prom.tmp-*")); len(m) != 0 {
		t.Errorf("temp files left behind: %v", m)
	}
}

func TestMetricsFileRefusesWhatItWouldClobber(t *testing.T) {
	root, env := claimEnv(t)
	corrupt := filepath.Join(root, "corrupt.prom")
	os.WriteFile(corrupt, []byte("node_load1 1\n"), 0o644)
	target := filepath.Join(root, "target")
	os.WriteFile(target, []byte("precious\n"), 0o644)
	link := filepath.Join(root, "link.prom")
	os.Symlink(target, link)
	ran := filepath.Join(root, "ran")
	for name, tc := range map[string]struct{ path, want string }{
		"not ours": {corrupt, "not a metrics file leasewrap wrote"},
		"symlink":  {link, "symlink"},
		"no dir":   {filepath.Join(root, "nodir", "x.prom"), "does not exist"},
	} {
		t.Run(name, func(t *testing.T) {
			have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--metrics-file", tc.path, "--", "touch", ran)
			if have != cli.ExitUsage || !strings.Contains(p.stderr.String(), tc.want) {
				t.Fatalf("want %d and %q, have %d\n%s", cli.ExitUsage, tc.want, have, &p.stderr)
			}
			if exists(ran) {
				t.Fatal("the command ran")
			}
		})
	}
	if b, _ := os.ReadFile(corrupt); string(b) != "node_load1 1\n" {
		t.Errorf("foreign file changed: %q", b)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("symlink target changed: %q", b)
	}
}

// TestMetricsFileRecordsARefusedCommandLine: a run verb refused after its
// flags were read (here a TTL outside the protocol's bounds) still leaves
// its metrics file, counted as an error with exit code 64.
func TestMetricsFileRecordsARefusedCommandLine(t *testing.T) {
	root, env := claimEnv(t)
	mf := filepath.Join(root, "job.prom")
	if have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--ttl", "5s", "--metrics-file", mf, "--", "true"); have != cli.ExitUsage {
		t.Fatalf("want %d, have %d\n%s", cli.ExitUsage, have, &p.stderr)
	}
	fams := readProm(t, mf)
	if v, _ := promtest.Value(fams, "leasewrap_runs_total", map[string]string{"kind": "claim", "key": "job", "outcome": "error"}); v != 1 {
		t.Errorf("want runs_total{error} 1, have %v", v)
	}
	if v, _ := promtest.Value(fams, "leasewrap_last_exit_code", map[string]string{"key": "job"}); v != cli.ExitUsage {
		t.Errorf("want last exit code %d, have %v", cli.ExitUsage, v)
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

func reserveEnv(t *testing.T) (home string, env []string) {
	home = filepath.Join(t.TempDir(), "orch")
	return home, []string{"ORCHESTRATECTL_HOME=" + home}
}

func recordPath(home, key string) string {
	return reserve.NewStore(home).RecordPath(reserve.Key{Key: key})
}

// countLines counts the lines of a child-side witness file.
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestReserveRunSixteenRacersRunTheChildOnce(t *testing.T) {
	home, env := reserveEnv(t)
	witness := filepath.Join(t.TempDir(), "runs")
	const n = 16
	var ps []*proc
	for range n {
		ps = append(ps, startLW(t, env, "reserve", "run", "nightly", "--wait", "30s", "--",
			"sh", "-c", "echo $LEASEWRAP_RUN_ID >> "+witness+"; sleep 0.3; exit 4"))
	}
	for i, p := range ps {
		if have := p.wait(t); have != 4 && have != 75 {
			t.Errorf("racer %d: want the run's 4 (ran or replayed), have %d\n%s", i, have, &p.stderr)
		}
	}
	if runs := countLines(t, witness); runs == 0 {
		t.Fatal("nobody ran the child")
	}
	// A failed run releases the key, so a waiter may run it again after
	// the first run ended (every racer still exits with a run's 4, or 75
	// if the last retries ran out of --wait). With exit 0 it runs once.
	os.Remove(witness)
	key := "nightly-ok"
	ps = ps[:0]
	for range n {
		ps = append(ps, startLW(t, env, "reserve", "run", key, "--wait", "30s", "--",
			"sh", "-c", "echo $LEASEWRAP_RUN_ID >> "+witness+"; sleep 0.3"))
	}
	for i, p := range ps {
		if have := p.wait(t); have != 0 {
			t.Errorf("racer %d: want 0 (ran, or replayed after waiting), have %d\n%s", i, have, &p.stderr)
		}
	}
	if runs := countLines(t, witness); runs != 1 {
		t.Fatalf("want the child to run exactly once for 16 racers, have %d runs", runs)
	}
	_ = home
}

func TestReserveRunReplaysPublishedAndRetriesFailures(t *testing.T) {
	_, env := reserveEnv(t)
	witness := filepath.Join(t.TempDir(), "runs")
	run := func(key string, code int, extra ...string) int {
		args := append([]string{"reserve", "run", key}, extra...)
		args = append(args, "--", "sh", "-c", fmt.Sprintf("echo %s >> %s; exit %d", key, witness, code))
		have, p := runLW(t, env, args...)
		if have != code && !strings.Contains(p.stderr.String(), "replaying") {
			t.Logf("stderr: %s", &p.stderr)
		}
		return have
	}
	if have := run("ok", 0); have != 0 {
		t.Fatalf("first run: want 0, have %d", have)
	}
	have, p := runLW(t, env, "reserve", "run", "ok", "--", "sh", "-c", "echo ran >> "+witness)
	if have != 0 || !strings.Contains(p.stderr.String(), "replaying the recorded result") {
		t.Fatalf("replay: want 0 and a replay message, have %d\n%s", have, &p.stderr)
	}
	if have := run("fail", 3); have != 3 {
		t.Fatalf("failed run: want 3, have %d", have)
	}
	if have := run("fail", 5); have != 5 {
		t.Fatalf("a failed run must be retried: want the retry's 5, have %d", have)
	}
	if have := run("pf", 6, "--publish-failures"); have != 6 {
		t.Fatalf("want 6, have %d", have)
	}
	if have := run("pf", 0, "--publish-failures"); have != 6 {
		t.Fatalf("a published failure must be replayed: want 6, have %d", have)
	}
	if got, want := readWitness(t, witness), "ok\nfail\nfail\npf\n"; got != want {
		t.Fatalf("want runs %q, have %q", want, got)
	}
}

func readWitness(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestReserveRunSupervisorSIGKILLKeepsTheRunInFlight(t *testing.T) {
	_, env := reserveEnv(t)
	dir := t.TempDir()
	pidFile, gone, witness := filepath.Join(dir, "pid"), filepath.Join(dir, "gone"), filepath.Join(dir, "runs")
	script := "echo run >> " + witness + "; " + pidThenHoldUntil(pidFile, gone) + "; exit 1"
	p := startLW(t, env, "reserve", "run", "job", "--", "sh", "-c", script)
	waitFor(t, "child pid", func() bool { return exists(pidFile) })
	b, _ := os.ReadFile(pidFile)
	childPid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	p.Cmd.Process.Kill()
	p.wait(t)

	have, retry := runLW(t, env, "reserve", "run", "job", "--", "sh", "-c", "echo run >> "+witness)
	if have != 75 || !strings.Contains(retry.stderr.String(), "in flight") {
		t.Fatalf("while the child runs: want 75 (in flight), have %d\n%s", have, &retry.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	waitFor(t, "child reaped", func() bool { return !exists(fmt.Sprintf("/proc/%d", childPid)) })
	if have, p := runLW(t, env, "reserve", "run", "job", "--", "sh", "-c", "echo run >> "+witness); have != 0 {
		t.Fatalf("after the child exited unpublished: want a reclaim and run (0), have %d\n%s", have, &p.stderr)
	}
	if runs := countLines(t, witness); runs != 2 {
		t.Fatalf("want 2 runs (the killed one, the reclaim), have %d", runs)
	}
}

func TestReserveRunReclaimsADeadCreator(t *testing.T) {
	// A reservation whose creator died between reserving and starting
	// the child: its materializer lease file exists, unlocked.
	home, env := reserveEnv(t)
	store := reserve.NewStore(home)
	lay := store.Layout()
	ml, err := reserve.AcquireMaterializerLease(lay, "01deadrun")
	if err != nil {
		t.Fatal(err)
	}
	path := ml.Path()
	rec := reserve.NewRecord("01deadrun", reserve.NewCreator(999999, nil, time.Now(), path))
	if existing, err := store.Reserve(context.Background(), reserve.Key{Key: "job"}, rec); err != nil || existing != nil {
		t.Fatal(existing, err)
	}
	ml.File().Close() // the creator "dies": its lock goes, the file stays
	have, p := runLW(t, env, "reserve", "run", "job", "--", "sh", "-c", "echo $LEASEWRAP_RUN_ID holder=$LEASEWRAP_HOLDER")
	if have != 0 {
		t.Fatalf("want the dead creator's key reclaimed and run, have %d\n%s", have, &p.stderr)
	}
	got, err := store.Lookup(context.Background(), reserve.Key{Key: "job"})
	if err != nil || got == nil || got.RunID == "01deadrun" {
		t.Fatalf("want the record to name the new run, have %+v %v", got, err)
	}
	if want := got.RunID + " holder=" + got.RunID; !strings.Contains(p.stdout.String(), want) {
		t.Fatalf("want the child to run as %q (LEASEWRAP_RUN_ID and LEASEWRAP_HOLDER), have %q", want, &p.stdout)
	}
}

func TestReserveRunRefusesRecordsItCannotDecideOn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    string
	}{
		{"legacy", "01legacyrunid\n", "legacy"},
		{"schema 2", `{"schema_version":2,"run_id":"01x"}`, "schema"},
		{"corrupt", `{"schema_version":1,"run_id":`, "corrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, env := reserveEnv(t)
			path := recordPath(home, "job")
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(tc.content), 0o644)
			ran := filepath.Join(t.TempDir(), "ran")
			have, p := runLW(t, env, "reserve", "run", "job", "--", "touch", ran)
			if have != cli.ExitRefused {
				t.Fatalf("want %d (refused), have %d\n%s", cli.ExitRefused, have, &p.stderr)
			}
			if !strings.Contains(strings.ToLower(p.stderr.String()), tc.want) || !strings.Contains(p.stderr.String(), path) {
				t.Fatalf("want an error naming %q and the path, have:\n%s", tc.want, &p.stderr)
			}
			if exists(ran) {
				t.Fatal("the command ran")
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Fatalf("the record was changed: %q", b)
			}
		})
	}
	t.Run("symlinked lock", func(t *testing.T) {
		home, env := reserveEnv(t)
		lock := reserve.NewStore(home).LockPath(reserve.Key{Key: "job"})
		os.MkdirAll(filepath.Dir(lock), 0o755)
		target := filepath.Join(t.TempDir(), "elsewhere")
		os.WriteFile(target, []byte("keep"), 0o644)
		os.Symlink(target, lock)
		have, p := runLW(t, env, "reserve", "run", "job", "--", "true")
		if have != cli.ExitRefused || !strings.Contains(p.stderr.String(), lock) {
			t.Fatalf("want %d naming %s, have %d\n%s", cli.ExitRefused, lock, have, &p.stderr)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep" {
			t.Fatal("the symlink target was touched")
		}
	})
}

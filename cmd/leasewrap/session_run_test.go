package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
)

const testSID = "5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42"

func sessionRoot(t *testing.T) string { return filepath.Join(t.TempDir(), "bcode") }

func ownerDir(root string) string { return filepath.Join(root, "leases", testSID) }

// ownerRecords lists the owner records of testSID.
func ownerRecords(t *testing.T, root string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(ownerDir(root), "*.json"))
	return m
}

func TestSessionRunRacersWithDifferentInstancesOneRuns(t *testing.T) {
	root := sessionRoot(t)
	dir := t.TempDir()
	witness, gone := filepath.Join(dir, "w"), filepath.Join(dir, "gone")
	var ps []*proc
	for i := range 2 {
		ps = append(ps, startLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--instance", fmt.Sprint("inst-", i),
			"--", "sh", "-c", "echo $LEASEWRAP_HOLDER >> "+witness+"; "+holdUntil(filepath.Join(dir, "ready"), gone)))
	}
	// The loser exits by itself; the owner holds until both have tried.
	waitFor(t, "one racer to be refused", func() bool {
		for _, p := range ps {
			select {
			case <-p.Done():
				return true
			default:
			}
		}
		return false
	})
	os.WriteFile(gone, nil, 0o644)
	codes := map[int]int{}
	for _, p := range ps {
		codes[p.wait(t)]++
	}
	if codes[0] != 1 || codes[75] != 1 {
		t.Fatalf("want one owner (0) and one refused (75), have %v", codes)
	}
	if n := countLines(t, witness); n != 1 {
		t.Fatalf("want exactly one child to run, have %d", n)
	}
	if recs := ownerRecords(t, root); len(recs) != 0 {
		t.Fatalf("want the owner record removed after its child exited, have %v", recs)
	}
}

func TestSessionRunSameInstanceIsReentrant(t *testing.T) {
	root := sessionRoot(t)
	dir := t.TempDir()
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	first := startLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--instance", "daemon-a", "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "first owner", func() bool { return exists(ready) })
	if have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--instance", "daemon-a", "--", "true"); have != 0 {
		t.Fatalf("same instance and epoch: want a re-entrant registration (0), have %d\n%s", have, &p.stderr)
	}
	if have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "5", "--instance", "daemon-a", "--", "true"); have != 75 {
		t.Fatalf("other epoch: want 75, have %d\n%s", have, &p.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	if have := first.wait(t); have != 0 {
		t.Fatalf("first owner: want 0, have %d", have)
	}
}

func TestSessionRunSupervisorSIGKILLKeepsTheOwnerLive(t *testing.T) {
	root := sessionRoot(t)
	dir := t.TempDir()
	pidFile, gone := filepath.Join(dir, "pid"), filepath.Join(dir, "gone")
	script := pidThenHoldUntil(pidFile, gone)
	p := startLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--instance", "a", "--", "sh", "-c", script)
	waitFor(t, "child pid", func() bool { return exists(pidFile) })
	b, _ := os.ReadFile(pidFile)
	childPid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	p.Cmd.Process.Kill()
	p.wait(t)

	have, second := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--instance", "b", "--", "true")
	if have != 75 || !strings.Contains(second.stderr.String(), "a") {
		t.Fatalf("while the orphaned child runs: want 75 naming the owner, have %d\n%s", have, &second.stderr)
	}
	have, owners := runLW(t, nil, "session", "owners", testSID, "--root", root, "--json")
	if have != 0 || !strings.Contains(owners.stdout.String(), `"live"`) {
		t.Fatalf("want the owner listed live, have %d\n%s%s", have, &owners.stdout, &owners.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	waitFor(t, "child reaped", func() bool { return !exists(fmt.Sprintf("/proc/%d", childPid)) })
	if have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--instance", "b", "--", "true"); have != 0 {
		t.Fatalf("after the child exited: want the stale owner pruned and the session owned (0), have %d\n%s", have, &p.stderr)
	}
	if recs := ownerRecords(t, root); len(recs) != 0 {
		t.Fatalf("want no owner records left, have %v", recs)
	}
}

func TestSessionMaintenanceAndOwnersExcludeEachOther(t *testing.T) {
	root := sessionRoot(t)
	dir := t.TempDir()
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	hold := holdUntil(ready, gone)

	m := startLW(t, nil, "session", "maintain", testSID, "--root", root, "--", "sh", "-c", hold)
	waitFor(t, "maintenance child", func() bool { return exists(ready) })
	if have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--", "true"); have != 75 {
		t.Fatalf("owner during maintenance: want 75, have %d\n%s", have, &p.stderr)
	}
	waiter := startLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--wait", "30s", "--", "sh", "-c", "echo owner ran")
	os.WriteFile(gone, nil, 0o644)
	if have := m.wait(t); have != 0 {
		t.Fatalf("maintenance: want 0, have %d\n%s", have, &m.stderr)
	}
	if have := waiter.wait(t); have != 0 || !strings.Contains(waiter.stdout.String(), "owner ran") {
		t.Fatalf("waiting owner: want to run after maintenance ended, have %d\n%s", have, &waiter.stderr)
	}

	os.Remove(ready)
	os.Remove(gone)
	owner := startLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--", "sh", "-c", hold)
	waitFor(t, "owner child", func() bool { return exists(ready) })
	if have, p := runLW(t, nil, "session", "maintain", testSID, "--root", root, "--", "echo", "migrating"); have != 75 || strings.Contains(p.stdout.String(), "migrating") {
		t.Fatalf("maintenance with a live owner: want 75 and nothing run, have %d\n%s", have, &p.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	owner.wait(t)
}

func TestSessionRunMigrate(t *testing.T) {
	root := sessionRoot(t)
	have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--migrate", "echo migrated; exit 9", "--", "echo", "main ran")
	if have != 9 || strings.Contains(p.stdout.String(), "main ran") {
		t.Fatalf("failed migration: want its 9 and nothing run, have %d\n%s%s", have, &p.stdout, &p.stderr)
	}
	if recs := ownerRecords(t, root); len(recs) != 0 {
		t.Fatalf("failed migration registered an owner: %v", recs)
	}
	script := `test -n "$LEASEWRAP_LEASE_TOKEN" && ls ` + ownerDir(root)
	have, p = runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--migrate", "echo kind=$LEASEWRAP_KIND", "--", "sh", "-c", script)
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
	}
	out := p.stdout.String()
	if !strings.Contains(out, "kind=session-maintenance") || !strings.Contains(out, ".json") {
		t.Fatalf("want the migration under maintenance, then the command under a registered owner, have:\n%s", out)
	}
}

func TestSessionRunRefusesBadInputAndLeavesItAlone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string) string // returns the path that must survive
		want  int
		err   string
	}{
		{"malformed record", func(dir string) string {
			p := filepath.Join(dir, "1-1-"+testSID+".json")
			os.WriteFile(p, []byte("{not json"), 0o644)
			return p
		}, cli.ExitRefused, "malformed"},
		{"unknown schema", func(dir string) string {
			p := filepath.Join(dir, "1-1-"+testSID+".json")
			rec := fmt.Sprintf(`{"schema_version": 9, "session_id": %q, "lease_token": "1-1-%s", "pid": 1,
  "storage_writer_epoch": 6, "daemon_namespace": null, "build_fingerprint": null, "protocol_version": null,
  "endpoint": null, "executable_path": null, "daemon_instance_id": "x", "acquired_at_ms": 1, "last_seen_ms": 1}`, testSID, testSID)
			os.WriteFile(p, []byte(rec), 0o644)
			return p
		}, cli.ExitRefused, "unverifiable"},
		{"directory as record", func(dir string) string {
			p := filepath.Join(dir, "1-1-"+testSID+".json")
			os.Mkdir(p, 0o755)
			return p
		}, cli.ExitRefused, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := sessionRoot(t)
			os.MkdirAll(ownerDir(root), 0o755)
			keep := tc.setup(ownerDir(root))
			before, _ := os.Lstat(keep)
			have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--", "echo", "ran")
			if have != tc.want || strings.Contains(p.stdout.String(), "ran") {
				t.Fatalf("want %d and nothing run, have %d\n%s", tc.want, have, &p.stderr)
			}
			if !strings.Contains(p.stderr.String(), tc.err) {
				t.Fatalf("want %q in the error, have:\n%s", tc.err, &p.stderr)
			}
			after, err := os.Lstat(keep)
			if err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() {
				t.Fatalf("the bad record was changed or removed: %v", err)
			}
		})
	}
	for _, sid := range []string{"../../etc", "5F0C6D4E-3B1A-4F59-9B8E-0D7F2A9C1E42", "x"} {
		if have, p := runLW(t, nil, "session", "run", sid, "--root", t.TempDir(), "--epoch", "6", "--", "true"); have != cli.ExitUsage {
			t.Fatalf("session id %q: want %d, have %d\n%s", sid, cli.ExitUsage, have, &p.stderr)
		}
	}
}

// The owner record names the daemon's executable as the supervisor
// executes it: a bare name found in PATH, absolute; a file without #!
// (which /bin/sh runs) by its own path, not /bin/sh's.
func TestSessionRunRecordsTheCommandsExecutable(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	sh, _ = filepath.Abs(sh)
	dir := t.TempDir()
	script := filepath.Join(dir, "daemon")
	if err := os.WriteFile(script, []byte("cp \"$1\"/*.json \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv func(owners, out string) []string
		want string
	}{
		{"in PATH", func(owners, out string) []string { return []string{"sh", "-c", `cp "$0"/*.json "$1"`, owners, out} }, sh},
		{"without #!", func(owners, out string) []string { return []string{script, owners, out} }, script},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := sessionRoot(t)
			out := filepath.Join(t.TempDir(), "owner.json")
			args := append([]string{"session", "run", testSID, "--root", root, "--epoch", "6", "--"}, tc.argv(ownerDir(root), out)...)
			if have, p := runLW(t, nil, args...); have != 0 {
				t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				ExecutablePath *string `json:"executable_path"`
			}
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatalf("owner record %s: %v", b, err)
			}
			if rec.ExecutablePath == nil || *rec.ExecutablePath != tc.want {
				t.Fatalf("want executable_path %s, have %s", tc.want, b)
			}
		})
	}
}

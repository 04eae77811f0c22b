package floor_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/bench/startup/floor"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/supervisor"
)

// The floors catch what leasewrap's supervisor catches, no more, no less.
func TestForwardedIsTheSupervisors(t *testing.T) {
	if !slices.Equal(floor.Forwarded, supervisor.ForwardedSignals()) {
		t.Fatalf("floor.Forwarded %v, supervisor.ForwardedSignals %v", floor.Forwarded, supervisor.ForwardedSignals())
	}
}

// build compiles the floor program of kind into dir.
func build(t *testing.T, dir, kind string) string {
	t.Helper()
	bin := filepath.Join(dir, "floor"+kind)
	out, err := exec.Command("go", "build", "-o", bin, "github.com/leasewrap/leasewrap/bench/startup/floor"+kind).CombinedOutput()
	if err != nil {
		t.Fatalf("build floor%s: %v\n%s", kind, err, out)
	}
	return bin
}

// The floor programs do their kind's protocol work for real: the lock is
// held while the command runs, the claim and the session owner are gone
// afterwards, a reservation is published and then replayed. lwbench's
// floor rows are only a floor if that is so.
func TestFloorProgramsDoTheProtocolWork(t *testing.T) {
	flockBin, err := exec.LookPath("flock")
	testutil.Need(t, "flock(1) (util-linux)", err)
	dir := t.TempDir()
	run := func(name string, args ...string) (string, int) {
		t.Helper()
		c := exec.Command(name, args...)
		c.Env = append(os.Environ(), "FNO_EVENTS_PATH="+filepath.Join(dir, "events.jsonl"))
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(out), 0
	}
	sh := "/bin/sh"

	// flock: flock(1) cannot take the lock while the floor's command runs.
	lock := filepath.Join(dir, "a.lock")
	if out, code := run(build(t, dir, "flock"), lock, flockBin, "-n", lock, "true"); code != 1 {
		t.Fatalf("flock(1) -n inside floorflock exited %d, want 1 (the lock held): %s", code, out)
	}
	if out, code := run(flockBin, "-n", lock, "true"); code != 0 {
		t.Fatalf("flock(1) -n after floorflock exited %d, want 0 (released): %s", code, out)
	}

	// claim: the claim file exists while the command runs, not after.
	claims := filepath.Join(dir, "claims")
	claimFile := filepath.Join(claims, ".fno", "claims", "bench%3Afloor.lock") // the key, encoded
	out, code := run(build(t, dir, "claim"), claims, "bench:floor", sh, "-c", `test -f "$1"`, "sh", claimFile)
	if code != 0 {
		t.Fatalf("floorclaim: the claim file %s was not there while the command ran (exit %d): %s", claimFile, code, out)
	}
	if _, err := os.Stat(claimFile); !os.IsNotExist(err) {
		t.Fatalf("floorclaim left %s behind: %v", claimFile, err)
	}
	ev, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil || !strings.Contains(string(ev), `"claim_acquired"`) || !strings.Contains(string(ev), `"claim_released"`) {
		t.Fatalf("floorclaim's audit events: %v\n%s", err, ev)
	}

	// session: an owner record exists while the command runs, not after.
	sessions := filepath.Join(dir, "sessions")
	sid := "5f0c6d4e-3b1a-4f59-9b8e-000000000001"
	owners := filepath.Join(sessions, "leases", sid)
	out, code = run(build(t, dir, "session"), sessions, sid, sh, "-c", `ls "$1"/*.json >/dev/null`, "sh", owners)
	if code != 0 {
		t.Fatalf("floorsession: no owner record in %s while the command ran (exit %d): %s", owners, code, out)
	}
	if m, _ := filepath.Glob(filepath.Join(owners, "*.json")); len(m) != 0 {
		t.Fatalf("floorsession left owner records behind: %v", m)
	}

	// reservation: a failed run is not published (run again), a
	// successful one is, and then replays without running.
	home := filepath.Join(dir, "home")
	reserveBin := build(t, dir, "reserve")
	if out, code := run(reserveBin, home, "k", sh, "-c", "exit 3"); code != 3 {
		t.Fatalf("floorreserve of a new key exited %d, want the command's 3: %s", code, out)
	}
	if out, code := run(reserveBin, home, "k", "/bin/true"); code != 0 {
		t.Fatalf("floorreserve after an unpublished failure exited %d, want 0 (run again): %s", code, out)
	}
	marker := filepath.Join(dir, "ran")
	if out, code := run(reserveBin, home, "k", sh, "-c", `touch "$1"; exit 5`, "sh", marker); code != 0 {
		t.Fatalf("floorreserve of a published key exited %d, want the replayed 0: %s", code, out)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("floorreserve ran the command of a published key")
	}
}

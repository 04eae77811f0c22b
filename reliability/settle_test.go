package reliability

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// settleCase is one settle step of one kind made to fail by strace fault
// injection on the step's own path (-P), so no other call is touched.
type settleCase struct {
	name   string
	k      kind
	flags  []string
	exit   int                    // the job's exit code
	path   func(e *env) string    // the path whose syscall fails
	inject string                 // strace -e inject=… value
	first  int                    // the failed run's exit code
	next   int                    // the next run's exit code (replayed or run)
	ran    bool                   // whether the next run runs its command
	check  func(*testing.T, *env) // what the failed run must have left
}

const settleRunID = "settle-run-1"

func settleCases() []settleCase {
	home := func(e *env, p ...string) string { return filepath.Join(append([]string{e.reserveHome()}, p...)...) }
	record := func(e *env) string { return reservationPath(e.reserveHome(), "reliability-key") }
	lease := func(e *env) string { return home(e, "idempotency", "materializers", settleRunID+".lease") }
	deadCreator := func(t *testing.T, e *env) {
		t.Helper()
		r, err := readReservationIndie(e.reserveHome(), "reliability-key")
		if err != nil || r == nil || r.Creator == nil {
			t.Fatalf("want the unsettled record left for reclaim, have %+v, %v", r, err)
		}
		if _, err := os.Stat(r.Creator.Lease); err != nil {
			t.Fatalf("the record's materializer lease is gone (%v): its creator cannot be proved dead, the key is blocked", err)
		}
		if flockHeld(r.Creator.Lease) {
			t.Fatalf("materializer lease %s still locked with nothing running", r.Creator.Lease)
		}
	}
	reserveFlags := []string{"--run-id", settleRunID}
	claimPathOf := func(e *env) string { return claimPath(e.claimRoot(), "reliability-key") }
	return []settleCase{
		{name: "reserve/publish-rename", k: kindReserve, flags: reserveFlags,
			path: func(e *env) string { return home(e, "runs", settleRunID) }, inject: "renameat,renameat2:error=ENOSPC",
			first: 70, next: 0, ran: true, check: deadCreator},
		{name: "reserve/publish-staging-mkdir", k: kindReserve, flags: reserveFlags,
			path: func(e *env) string { return home(e, ".creating", "runs", settleRunID) }, inject: "mkdir,mkdirat:error=ENOSPC",
			first: 70, next: 0, ran: true, check: deadCreator},
		{name: "reserve/publish-manifest-write", k: kindReserve, flags: reserveFlags,
			path: func(e *env) string { return home(e, ".creating", "runs", settleRunID, "manifest.json") }, inject: "open,openat:error=ENOSPC",
			first: 70, next: 0, ran: true, check: deadCreator},
		{name: "reserve/release-record", k: kindReserve, flags: reserveFlags, exit: 3,
			path: record, inject: "unlinkat,unlink:error=EIO",
			first: 70, next: 0, ran: true, check: deadCreator},
		{name: "reserve/published-lease-removal", k: kindReserve, flags: reserveFlags,
			path: lease, inject: "unlinkat,unlink:error=EIO", first: 0, next: 0, ran: false},
		{name: "reserve/released-lease-removal", k: kindReserve, flags: reserveFlags, exit: 3,
			path: lease, inject: "unlinkat,unlink:error=EIO", first: 3, next: 0, ran: true},
		{name: "claim/release-unlink", k: kindClaimPID,
			path: claimPathOf, inject: "unlinkat,unlink:error=EIO", first: 70, next: 0, ran: true},
		// A TTL claim of a dead pid is suspect until its expires_at (the
		// protocol's rule): refused with 75 until then, never 65 or 70.
		{name: "claim-ttl/release-unlink", k: kindClaimTTL,
			path: claimPathOf, inject: "unlinkat,unlink:error=EIO", first: 70, next: 75, ran: false},
		{name: "claim/release-mutex-mkdir", k: kindClaimPID,
			path: func(e *env) string { return claimPathOf(e) + ".recovery.d" }, inject: "mkdir,mkdirat:error=EIO",
			first: 0, next: 0, ran: true},
		{name: "claim/release-mutex-removal", k: kindClaimPID,
			path: func(e *env) string { return claimPathOf(e) + ".recovery.d" }, inject: "unlinkat,rmdir:error=EIO",
			first: 0, next: 0, ran: true},
		{name: "session/release-owner-record", k: kindSession,
			path: func(e *env) string { return ownerDir(e.sessionRoot(), testSID) }, inject: "unlinkat,unlink:error=EIO",
			first: 70, next: 0, ran: true},
	}
}

// TestEveryFailedSettleStepLeavesAReclaimableState (issue 17): each
// settle step of each local kind fails once (strace injects the error on
// that step's path only); whatever the failed run exits, it must leave a
// state the protocol's own rules reclaim, and the next run proceeds:
// runs the key again, or replays what was published.
func TestEveryFailedSettleStepLeavesAReclaimableState(t *testing.T) {
	strace, err := exec.LookPath("strace")
	testutil.Need(t, "strace", err)
	for _, c := range settleCases() {
		t.Run(strings.ReplaceAll(c.name, "/", "_"), func(t *testing.T) {
			e := newEnv(t)
			foreignIntact := e.plantForeign()
			p := c.path(e)
			if c.name == "session/release-owner-record" {
				// The owner record's name holds the pid and time: fail every
				// removal in the session's owner directory.
				os.MkdirAll(p, 0o777)
			}
			args := append(c.k.args(e, c.k.keyFor()), c.flags...)
			args = append(append(args, "--"), e.childArgv()...)
			cmd := e.lwCmd(e.childEnv("failed", 0, c.exit), args...)
			trace := []string{strace, "-f", "-qq", "-o", "/dev/null", "-P", p, "-e", "inject=" + c.inject}
			if c.name == "session/release-owner-record" {
				trace = []string{strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=unlinkat,unlink", "-e", "inject=" + c.inject}
			}
			cmd.Path, cmd.Args = strace, append(trace, cmd.Args...)
			r := runBounded(t, cmd, nil)
			t.Logf("RESULT %s failed step | exit %d | %s", c.name, r.code, lastLine(r.err))
			if r.code != c.first || readWitness(t, e.witness)["failed"] == nil {
				t.Fatalf("the run whose settle step fails: want exit %d after the job ran, have %v", c.first, r)
			}
			if c.check != nil {
				c.check(t, e)
			}
			reapOrphans(nil, 10*time.Second)
			n := e.run(c.k, "next", 0, 0, "")
			ran := readWitness(t, e.witness)["next"] != nil
			t.Logf("RESULT %s next run | exit %d | ran %v | %s", c.name, n.code, ran, lastLine(n.err))
			if n.code != c.next || ran != c.ran {
				t.Fatalf("the next run: want exit %d, ran=%v; have ran=%v %v", c.next, c.ran, ran, n)
			}
			if c.next == 0 {
				checkSettled(t, e, c.k)
			}
			foreignIntact(t)
			noOrphans(t)
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

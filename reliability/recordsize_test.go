package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestRecordsSizedBeforeTheJobRuns (issue 17): every record a run writes
// is sized with its real encoding, at its largest, before anything is
// acquired; one its readers would refuse is usage (64), naming the field
// and the limit, and nothing is written or run. Each case then runs the
// key normally: nothing was left to block it.
func TestRecordsSizedBeforeTheJobRuns(t *testing.T) {
	ctl := func(n int) string { return strings.Repeat("\x01", n) }
	// DEL is one byte in argv and in JSON, four in the claim's YAML ("\x7F").
	del := func(n int) string { return strings.Repeat("\x7f", n) }
	cases := []struct {
		name, field string
		k           kind
		flags       []string
		argv        []string // extra arguments of the command
		nothingAt   func(e *env) string
		bigStack    bool
	}{
		{name: "session-owner-record", field: "--build", k: kindSession,
			flags:     []string{"--build", ctl(90_000), "--endpoint", ctl(90_000)},
			nothingAt: func(e *env) string { return filepath.Join(e.sessionRoot(), "leases", testSID) }},
		{name: "claim-record", field: "metadata", k: kindClaimTTL,
			flags: []string{"--holder", del(125_000), "--reason", del(125_000),
				"--metadata", `{"m":"` + del(125_000) + `"}`},
			nothingAt: func(e *env) string { return filepath.Join(e.claimRoot(), ".fno", "claims") }},
		// A manifest over 16 MiB needs an argv over 2.8 MB of "<": more
		// than ARG_MAX under the default 8 MiB stack, so the stack limit is
		// raised (as `ulimit -s unlimited` would).
		{name: "reservation-manifest", field: "argv", k: kindReserve, bigStack: true,
			argv:      repeatArg(strings.Repeat("<", 120_000), 24),
			nothingAt: func(e *env) string { return filepath.Join(e.reserveHome(), "idempotency") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.bigStack {
				raiseStack(t)
			}
			e := newEnv(t)
			args := append(c.k.args(e, c.k.keyFor()), c.flags...)
			args = append(append(append(args, "--"), e.childArgv()...), c.argv...)
			r := e.lw(e.childEnv("big", 0, 0), args...)
			ran := readWitness(t, e.witness)["big"] != nil
			t.Logf("RESULT %s | exit %d | ran %v | %s", c.name, r.code, ran, firstLine(r.err))
			if r.code != 64 || ran || !strings.Contains(r.err, c.field) || !strings.Contains(r.err, "1048576") && !strings.Contains(r.err, "16777216") {
				t.Fatalf("want 64 naming %s and the limit, nothing run; have ran=%v %.3000v", c.field, ran, r)
			}
			if ents, err := os.ReadDir(c.nothingAt(e)); err == nil && len(ents) > 0 {
				t.Fatalf("something was written at %s: %v", c.nothingAt(e), ents)
			}
			if r := e.run(c.k, "after", 0, 0, ""); r.code != 0 || readWitness(t, e.witness)["after"] == nil {
				t.Fatalf("the key is blocked after the refusal: %v", r)
			}
		})
	}
}

func repeatArg(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// raiseStack raises this process's RLIMIT_STACK (inherited by the
// processes it starts, for the rest of the test) so an argv of several
// megabytes can be executed.
func raiseStack(t *testing.T) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &old); err != nil {
		t.Fatal(err)
	}
	want := uint64(64 << 20)
	if old.Max != unix.RLIM_INFINITY && old.Max < want {
		testutil.Need(t, "an RLIMIT_STACK hard limit of 64 MiB", fmt.Errorf("hard limit %d is below %d", old.Max, want))
	}
	if err := unix.Setrlimit(unix.RLIMIT_STACK, &unix.Rlimit{Cur: want, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_STACK, &old) })
}

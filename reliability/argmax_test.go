package reliability

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestArgvTooLongToExecIsFoundBeforeAcquiring (issue 17): a child whose
// exec would fail with E2BIG, here because leasewrap adds the lease key or
// holder to its environment (LEASEWRAP_KEY, LEASEWRAP_HOLDER) and that one
// string passes MAX_ARG_STRLEN (131072 bytes with its NUL), exits 126 (as
// sh and env(1) give for E2BIG, docs/USAGE.md's code for a command that
// cannot be executed) before anything is acquired, naming the variable. The
// same key or holder with a command that fits is not blocked afterwards.
func TestArgvTooLongToExecIsFoundBeforeAcquiring(t *testing.T) {
	long := strings.Repeat("x", 131_060) // fits leasewrap's argv; NAME=long does not
	cases := []struct {
		name, variable string
		args           func(e *env) []string
		nothingAt      func(e *env) string
	}{
		{"reserve-key", "LEASEWRAP_KEY",
			func(e *env) []string { return []string{"reserve", "run", long, "--home", e.reserveHome()} },
			func(e *env) string { return filepath.Join(e.reserveHome(), "idempotency", "[0-9a-f]*[0-9a-f]") }},
		{"claim-holder", "LEASEWRAP_HOLDER",
			func(e *env) []string {
				return []string{"claim", "run", "k", "--root", e.claimRoot(), "--holder", long}
			},
			func(e *env) string { return filepath.Join(e.claimRoot(), ".fno", "claims", "*") }},
		{"session-instance", "LEASEWRAP_HOLDER",
			func(e *env) []string {
				return []string{"session", "run", testSID, "--root", e.sessionRoot(), "--epoch", "6", "--instance", long}
			},
			func(e *env) string { return filepath.Join(e.sessionRoot(), "leases", testSID, "*") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.lw(e.childEnv("e2big", 0, 0), append(append(c.args(e), "--"), e.childArgv()...)...)
			ran := readWitness(t, e.witness)["e2big"] != nil
			t.Logf("RESULT %s | exit %d | ran %v | %.300s", c.name, r.code, ran, firstLine(r.err))
			if r.code != 126 || ran || !strings.Contains(r.err, c.variable) || !strings.Contains(r.err, "E2BIG") {
				t.Fatalf("want 126 naming %s (E2BIG), nothing run; have ran=%v %.2000v", c.variable, ran, r)
			}
			if m, _ := filepath.Glob(c.nothingAt(e)); len(m) > 0 {
				t.Fatalf("a command that cannot be executed left a lease behind: %v", m)
			}
		})
	}
}

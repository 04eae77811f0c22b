package reliability

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// kind is one way to run a wrapped command under a lease.
type kind struct {
	name    string
	leaseFD bool // the child inherits the lease as fd 3
	args    func(e *env, key string) []string
}

const testSID = "5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42"

func (e *env) claimRoot() string   { return filepath.Join(e.dir, "claims") }
func (e *env) reserveHome() string { return filepath.Join(e.dir, "orchestratectl") }
func (e *env) sessionRoot() string { return filepath.Join(e.dir, "sessions") }

// The claim/pid kind is a pid-only claim (--ttl 0, the explicit opt-in;
// claim run's default is a 2m TTL, which claim/ttl covers).
var (
	kindClaimPID = kind{name: "claim/pid", args: func(e *env, key string) []string {
		return []string{"claim", "run", key, "--root", e.claimRoot(), "--ttl", "0"}
	}}
	kindClaimTTL = kind{name: "claim/ttl", args: func(e *env, key string) []string {
		return []string{"claim", "run", key, "--root", e.claimRoot(), "--ttl", "1m", "--renew-every", "100ms"}
	}}
	kindReserve = kind{name: "reserve", leaseFD: true, args: func(e *env, key string) []string {
		return []string{"reserve", "run", key, "--home", e.reserveHome()}
	}}
	kindSession = kind{name: "session", leaseFD: true, args: func(e *env, key string) []string {
		return []string{"session", "run", key, "--root", e.sessionRoot(), "--epoch", "6"}
	}}
	// kindFlock is flock(1)'s lock: the locked descriptor is handed over
	// as fd 3.
	kindFlock = kind{name: "flock", leaseFD: true, args: func(e *env, key string) []string {
		return []string{"flock", "run", filepath.Join(e.dir, key+".lock")}
	}}
	kindSessionMigrate = kind{name: "session/migrate", leaseFD: true, args: func(e *env, key string) []string {
		return []string{"session", "run", key, "--root", e.sessionRoot(), "--epoch", "6", "--migrate", "true"}
	}}
)

func (k kind) isClaim() bool   { return k.name[:5] == "claim" }
func (k kind) isSession() bool { return len(k.name) >= 7 && k.name[:7] == "session" }

// keyFor is the key a scenario of k uses.
func (k kind) keyFor() string {
	if k.isSession() {
		return testSID
	}
	return "reliability-key"
}

// run runs the witness child id under k, with extra leasewrap flags
// before the "--".
func (e *env) run(k kind, id string, hold time.Duration, exit int, fault string, flags ...string) result {
	e.t.Helper()
	args := append(k.args(e, k.keyFor()), flags...)
	args = append(append(args, "--"), e.childArgv()...)
	extra := e.childEnv(id, hold, exit)
	if fault != "" {
		extra = append(extra, "LEASEWRAP_FAULT="+fault)
	}
	return e.lw(extra, args...)
}

// foreign plants files leasewrap must never touch, and returns a check.
func (e *env) plantForeign() func(t *testing.T) {
	files := map[string][]byte{
		filepath.Join(e.claimRoot(), ".fno", "claims", "zz-foreign-notes.txt"): []byte("not a claim\n"),
		filepath.Join(e.reserveHome(), "idempotency", "zz-foreign"):            []byte("{not json"),
		filepath.Join(e.sessionRoot(), "leases", testSID, "notes.txt"):         []byte("operator notes\n"),
		filepath.Join(e.reserveHome(), "runs", "foreign-run", "manifest.json"): []byte(`{"exit_code":0}`),
	}
	for p, b := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	return func(t *testing.T) {
		t.Helper()
		for p, want := range files {
			have, err := os.ReadFile(p)
			if err != nil || string(have) != string(want) {
				t.Errorf("foreign file %s changed: want %q, have %q (%v)", p, want, have, err)
			}
		}
	}
}

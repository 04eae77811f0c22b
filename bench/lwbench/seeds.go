package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// seedBins are the seeds' own Rust code behind the interop harnesses'
// CLIs (lease/*/testdata/*/src/main.rs), built with --release by
// bench/run.sh: the same protocol work as a leasewrap run, done by the
// code leasewrap is a peer of.
type seedBins struct {
	claimrs   string // claims seed (003): acquire / release
	reservers string // reservation seed (000): reserve / lookup
	seedrs    string // session seed (004): run (owner lease around a command)
}

func (s seedBins) ok() bool { return s.claimrs != "" && s.reservers != "" && s.seedrs != "" }

// seedVariant is one command of the seeds section. A leasewrap run verb
// names its seed's variant (seed) and the target against it (seedLimit, 0
// for none) and is held to ≤ 2.5 × flock(1); emptyLimit is a target
// against the empty Go program (0 for none).
type seedVariant struct {
	name       string
	cmd        func() *exec.Cmd
	seed       string
	seedLimit  float64
	emptyLimit float64
	timed
}

// seeds times every kind's `run -- true` against its seed's own code doing
// the same protocol work, and against `flock -n FILE true`, with the
// floors (fork+exec+wait of `true`, an empty static Go program, a static
// Go program that only runs `true`) in the same
// interleaved rounds:
//
//   - claim: `sh -c 'claimrs acquire … TTL && /bin/true; claimrs release …'`
//     (acquire with a TTL, run, release: three processes and a shell), vs
//     `leasewrap claim run KEY -- true` (TTL 2m, the default).
//   - session: `seedrs run ROOT SID INSTANCE 6 /bin/true` (the seed's
//     acquire_session_lease, the command, the guard's drop: one process and
//     the command), vs `leasewrap session run SID --epoch 6 -- true`.
//   - reservation, new key: `sh -c 'reservers reserve - - KEY RUN && /bin/true'`
//     (materializer lease, reserve), vs `leasewrap reserve run KEY -- true`,
//     which also publishes the run's manifest (6 fsyncs): the seed has no
//     publisher (orchestratectl does that outside idempotency.rs).
//   - reservation, replay of a published key: `sh -c 'reservers lookup - - KEY
//     && test -e HOME/runs/RUN/manifest.json'` vs `leasewrap reserve run KEY
//     -- true` of a key leasewrap published (no child runs).
//
// Targets: claim ≤ 1.0 × its seed script; every kind ≤ 2.5 × flock(1);
// --version and reserve hash ≤ 2 × the empty program.
func seeds(e *env, s seedBins) {
	if !s.ok() {
		fmt.Printf("## Against the seeds' own code\n\nskipped: the seed drivers were not built (bench/run.sh builds them with cargo --release after `make harnesses`; give -claimrs, -reservers and -seedrs).\n\n")
		return
	}
	if e.empty == "" || e.gorun == "" {
		fatal(fmt.Errorf("seeds: -empty and -gorun (static baseline programs) are needed; bench/run.sh builds them"))
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		fatal(err)
	}
	lockFile := filepath.Join(e.dir, "seeds-flock.lock")
	seedClaims := filepath.Join(e.dir, "seed-claims")
	seedHome := filepath.Join(e.dir, "seed-home")
	seedSess := filepath.Join(e.dir, "seed-sessions")
	for _, d := range []string{seedClaims, seedHome, seedSess} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fatal(err)
		}
	}
	sh := func(script string, args ...string) *exec.Cmd {
		c := exec.Command("/bin/sh", append([]string{"-c", script, "sh"}, args...)...)
		c.Env = append(os.Environ(), "ORCHESTRATECTL_HOME="+seedHome)
		return c
	}
	claimKey, sessKey, seedSessKey := e.next(), e.next(), e.next()
	// A published key of each side for the replay variants: leasewrap
	// publishes its own; the seed has no publisher, so the seed's key is
	// reserved by the seed and its manifest written here.
	if err := e.lw(reserveKind.argv(e, 1, nil, "true")).Run(); err != nil {
		fatal(fmt.Errorf("prime the leasewrap replay key: %w", err))
	}
	if out, err := sh(`"$1" reserve - - replay run-replay >/dev/null`, s.reservers).CombinedOutput(); err != nil {
		fatal(fmt.Errorf("prime the seed replay key: %v: %s", err, out))
	}
	manifest := filepath.Join(seedHome, "runs", "run-replay", "manifest.json")
	if err := os.MkdirAll(filepath.Dir(manifest), 0o755); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(`{"exit_code":0}`), 0o644); err != nil {
		fatal(err)
	}
	lw := func(args ...string) func() *exec.Cmd { return func() *exec.Cmd { return e.lw(args) } }
	vs := []*seedVariant{
		{name: "true (fork+exec+wait)", cmd: func() *exec.Cmd { return exec.Command(truePath) }},
		{name: "empty static Go program", cmd: func() *exec.Cmd { return exec.Command(e.empty) }},
		{name: "flock -n FILE true", cmd: func() *exec.Cmd { return exec.Command(e.flock, "-n", lockFile, truePath) }},
		{name: "static Go program running true (no lease)", cmd: func() *exec.Cmd { return exec.Command(e.gorun, truePath) }},
		{name: "leasewrap --version", cmd: lw("--version"), emptyLimit: 2},
		{name: "leasewrap reserve hash KEY", cmd: lw("reserve", "hash", "KEY"), emptyLimit: 2},
		{name: "seed claim script (acquire TTL, true, release)", cmd: func() *exec.Cmd {
			return sh(`"$1" acquire "$2" bench:seed h 120000 0 "" >/dev/null && "$3"; "$1" release "$2" bench:seed h >/dev/null`,
				s.claimrs, seedClaims, truePath)
		}},
		{name: "claim run -- true", cmd: func() *exec.Cmd { return e.lw(claimKind.argv(e, claimKey, nil, "true")) },
			seed: "seed claim script (acquire TTL, true, release)", seedLimit: 1},
		{name: "seed session run (acquire, true, drop)", cmd: func() *exec.Cmd {
			return exec.Command(s.seedrs, "run", seedSess, sid(seedSessKey), "bench", "6", truePath)
		}},
		{name: "session run -- true", cmd: func() *exec.Cmd { return e.lw(sessionKind.argv(e, sessKey, nil, "true")) },
			seed: "seed session run (acquire, true, drop)"},
		{name: "seed reservation script (reserve new key, true)", cmd: func() *exec.Cmd {
			k := e.next()
			return sh(`"$1" reserve - - "k$2" "run-$2" >/dev/null && "$3"`, s.reservers, fmt.Sprint(k), truePath)
		}},
		{name: "reserve run -- true (new key)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, e.next(), nil, "true")) },
			seed: "seed reservation script (reserve new key, true)"},
		{name: "seed reservation replay (lookup, manifest)", cmd: func() *exec.Cmd {
			return sh(`"$1" lookup - - replay >/dev/null && test -e "$2"`, s.reservers, manifest)
		}},
		{name: "reserve run -- true (replay)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, 1, nil, "true")) },
			seed: "seed reservation replay (lookup, manifest)"},
	}
	byName := map[string]*seedVariant{}
	for _, v := range vs {
		byName[v.name] = v
	}
	rounds := e.n
	if e.quick {
		rounds = min(rounds, 40)
	}
	const warmup = 5
	cmds := make([]func() *exec.Cmd, len(vs))
	for i, v := range vs {
		cmds[i] = v.cmd
	}
	for i, t := range interleave(rounds, warmup, cmds) {
		vs[i].timed = t
	}
	empty, flock := byName["empty static Go program"], byName["flock -n FILE true"]
	var rows [][]string
	for _, v := range vs {
		ok := okOnly(v.wall)
		row := []string{v.name, fmt.Sprint(len(ok)), ms(ok.median()), ms(ok.quantile(0.95)), ms(v.cpu.median()),
			fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, empty.wall))),
			fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, flock.wall)))}
		seedRatio := "—"
		var targets, met []string
		check := func(r, limit float64, base string) {
			targets = append(targets, fmt.Sprintf("≤ %.1f × %s", limit, base))
			if r <= limit {
				met = append(met, "yes")
			} else {
				met = append(met, "**no**")
			}
		}
		if v.emptyLimit > 0 {
			check(medianF(roundRatios(v.wall, empty.wall)), v.emptyLimit, "empty")
		}
		if v.seed != "" {
			r := medianF(roundRatios(v.wall, byName[v.seed].wall))
			seedRatio = fmt.Sprintf("%.2f", r)
			if v.seedLimit > 0 {
				check(r, v.seedLimit, "seed")
			}
			check(medianF(roundRatios(v.wall, flock.wall)), 2.5, "flock")
		}
		target, verdict := "—", "—"
		if len(targets) > 0 {
			target, verdict = strings.Join(targets, "; "), strings.Join(met, "; ")
		}
		rows = append(rows, append(row, seedRatio, target, verdict, fmt.Sprint(v.fail)))
	}
	table("Against the seeds' own code: wall time per run (ms), side by side",
		fmt.Sprintf("%d interleaved rounds after %d warm-up rounds, order rotating. ÷empty, ÷flock and ÷seed are medians over rounds of (variant / baseline in the same round); ÷seed compares each leasewrap run with the row above it (its seed's code doing the same protocol work, release builds of lease/*/testdata/*). CPU = user+sys (rusage), median.", rounds, warmup),
		[]string{"command", "runs", "median", "p95", "CPU median", "÷empty", "÷flock", "÷seed", "target", "met", "failed"}, rows)
	os.Stdout.Sync()
}

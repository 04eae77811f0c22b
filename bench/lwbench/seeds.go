package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
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

// floorBins are the floor programs (bench/startup/floor*, built by
// bench/run.sh): each kind's protocol work done by the smallest Go program
// that still forwards signals, through the kind's own lease package, with
// no command line, no supervisor and no safety extras (anchoring, job
// form). floorDir holds floorflock, floorclaim, floorsession and
// floorreserve; "" skips the floor rows.
type floorBins struct{ dir string }

func (f floorBins) path(kind string) string { return filepath.Join(f.dir, "floor"+kind) }

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
	// flockLimit is the target against flock(1) of a leasewrap run verb
	// (2.5 when 0); floor names the row of the same kind's floor program,
	// "" for none.
	flockLimit float64
	floor      string
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
// Each kind's floor program (floorBins) runs in the same rounds, and the
// kong2 baseline: "floor + kong" is, per round, the floor plus what kong's
// model costs an empty program (kong2 − empty), the least any leasewrap
// run verb can cost under the design card (Go, kong) and the protocol.
// Where it already misses a target, the target is blocked by that floor.
//
// Targets: claim ≤ 1.0 × its seed script; every kind ≤ 2.5 × flock(1),
// the flock kind ≤ 1.5 ×; --version and reserve hash ≤ 2 × the empty
// program.
func seeds(e *env, s seedBins, fb floorBins) {
	if !s.ok() {
		fmt.Printf("## Against the seeds' own code\n\nskipped: the seed drivers were not built (bench/run.sh builds them with cargo --release after `make harnesses`; give -claimrs, -reservers and -seedrs).\n\n")
		return
	}
	if e.empty == "" || e.gorun == "" || e.kong2 == "" {
		fatal(fmt.Errorf("seeds: -empty, -gorun and -kong2 (static baseline programs) are needed; bench/run.sh builds them"))
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
	claimKey, sessKey, seedSessKey, floorSessKey := e.next(), e.next(), e.next(), e.next()
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
		{name: "static Go program parsing a two-verb kong model", cmd: func() *exec.Cmd { return exec.Command(e.kong2, "hash", "KEY") }},
		{name: "floor: flock + true (Go, signals; no CLI, no supervisor)", cmd: func() *exec.Cmd {
			return floorCmd(e, fb, "flock", lockFile+".floor", truePath)
		}},
		{name: "flock run -- true", cmd: func() *exec.Cmd { return e.lw(flockKind.argv(e, 0, nil, "true")) },
			seed: "flock -n FILE true", flockLimit: 1.5, floor: "floor: flock + true (Go, signals; no CLI, no supervisor)"},
		{name: "leasewrap --version", cmd: lw("--version"), emptyLimit: 2},
		{name: "leasewrap reserve hash KEY", cmd: lw("reserve", "hash", "KEY"), emptyLimit: 2},
		{name: "seed claim script (acquire TTL, true, release)", cmd: func() *exec.Cmd {
			return sh(`"$1" acquire "$2" bench:seed h 120000 0 "" >/dev/null && "$3"; "$1" release "$2" bench:seed h >/dev/null`,
				s.claimrs, seedClaims, truePath)
		}},
		{name: "floor: claim protocol + true (Go, signals; no CLI, no supervisor, no anchoring)", cmd: func() *exec.Cmd {
			return floorCmd(e, fb, "claim", e.claimRoot(), "bench:floor", truePath)
		}},
		{name: "claim run -- true", cmd: func() *exec.Cmd { return e.lw(claimKind.argv(e, claimKey, nil, "true")) },
			seed: "seed claim script (acquire TTL, true, release)", seedLimit: 1,
			floor: "floor: claim protocol + true (Go, signals; no CLI, no supervisor, no anchoring)"},
		{name: "seed session run (acquire, true, drop)", cmd: func() *exec.Cmd {
			return exec.Command(s.seedrs, "run", seedSess, sid(seedSessKey), "bench", "6", truePath)
		}},
		{name: "floor: session protocol + true (Go, signals; no CLI, no supervisor)", cmd: func() *exec.Cmd {
			return floorCmd(e, fb, "session", e.sessRoot(), sid(floorSessKey), truePath)
		}},
		{name: "session run -- true", cmd: func() *exec.Cmd { return e.lw(sessionKind.argv(e, sessKey, nil, "true")) },
			seed: "seed session run (acquire, true, drop)", floor: "floor: session protocol + true (Go, signals; no CLI, no supervisor)"},
		{name: "seed reservation script (reserve new key, true)", cmd: func() *exec.Cmd {
			k := e.next()
			return sh(`"$1" reserve - - "k$2" "run-$2" >/dev/null && "$3"`, s.reservers, fmt.Sprint(k), truePath)
		}},
		{name: "floor: reservation protocol + true, new key (Go, signals; no CLI, no supervisor)", cmd: func() *exec.Cmd {
			return floorCmd(e, fb, "reserve", e.home(), fmt.Sprintf("bench-floor-%d", e.next()), truePath)
		}},
		{name: "reserve run -- true (new key)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, e.next(), nil, "true")) },
			seed: "seed reservation script (reserve new key, true)", floor: "floor: reservation protocol + true, new key (Go, signals; no CLI, no supervisor)"},
		{name: "seed reservation replay (lookup, manifest)", cmd: func() *exec.Cmd {
			return sh(`"$1" lookup - - replay >/dev/null && test -e "$2"`, s.reservers, manifest)
		}},
		{name: "floor: reservation replay (Go, signals; no CLI, no supervisor)", cmd: func() *exec.Cmd {
			return floorCmd(e, fb, "reserve", e.home(), "bench-k1", truePath)
		}},
		{name: "reserve run -- true (replay)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, 1, nil, "true")) },
			seed: "seed reservation replay (lookup, manifest)", floor: "floor: reservation replay (Go, signals; no CLI, no supervisor)"},
	}
	if fb.dir == "" {
		// No floor programs: drop their rows.
		kept := vs[:0]
		for _, v := range vs {
			if !strings.HasPrefix(v.name, "floor: ") {
				v.floor = ""
				kept = append(kept, v)
			}
		}
		vs = kept
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
	kong2 := byName["static Go program parsing a two-verb kong model"]
	// withKong is, per round, a floor row plus kong's cost in that round
	// (kong2 − empty): the least a run verb with a kong command line costs.
	withKong := func(f *seedVariant) []time.Duration {
		out := make([]time.Duration, len(f.wall))
		for i := range out {
			out[i] = -1
			if i < len(kong2.wall) && i < len(empty.wall) && f.wall[i] >= 0 && kong2.wall[i] >= 0 && empty.wall[i] >= 0 {
				out[i] = f.wall[i] + kong2.wall[i] - empty.wall[i]
			}
		}
		return out
	}
	var rows [][]string
	for _, v := range vs {
		ok := okOnly(v.wall)
		row := []string{v.name, fmt.Sprint(len(ok)), ms(ok.median()), ms(ok.quantile(0.95)), ms(v.cpu.median()),
			fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, empty.wall))),
			fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, flock.wall)))}
		seedRatio, floorRatio := "—", "—"
		var targets, met, floors []string
		check := func(wall []time.Duration, limit float64, base string, baseWall []time.Duration) {
			r := medianF(roundRatios(wall, baseWall))
			targets = append(targets, fmt.Sprintf("≤ %.1f × %s", limit, base))
			if r <= limit {
				met = append(met, "yes")
			} else {
				met = append(met, "**no**")
			}
			if v.floor == "" {
				return
			}
			// The same target for the floor with kong: blocked when even
			// that misses it.
			fr := medianF(roundRatios(withKong(byName[v.floor]), baseWall))
			verdict := "open"
			if fr > limit {
				verdict = "**blocked**"
			}
			floors = append(floors, fmt.Sprintf("%.2f (%s)", fr, verdict))
		}
		if v.emptyLimit > 0 {
			check(v.wall, v.emptyLimit, "empty", empty.wall)
		}
		if v.seed != "" {
			seedRatio = fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, byName[v.seed].wall)))
			if v.seedLimit > 0 {
				check(v.wall, v.seedLimit, "seed", byName[v.seed].wall)
			}
			limit := v.flockLimit
			if limit == 0 {
				limit = 2.5
			}
			check(v.wall, limit, "flock", flock.wall)
		}
		floorKong := "—"
		if v.floor != "" {
			floorRatio = fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, byName[v.floor].wall)))
			// Issue 24's per-run target: within 1.15 × the floor plus kong.
			r := medianF(roundRatios(v.wall, withKong(byName[v.floor])))
			floorKong = fmt.Sprintf("%.2f", r)
			targets = append(targets, "≤ 1.15 × floor + kong")
			if r <= 1.15 {
				met = append(met, "yes")
			} else {
				met = append(met, "**no**")
			}
		}
		target, verdict, floorVerdict := "—", "—", "—"
		if len(targets) > 0 {
			target, verdict = strings.Join(targets, "; "), strings.Join(met, "; ")
		}
		if len(floors) > 0 {
			floorVerdict = strings.Join(floors, "; ")
		}
		rows = append(rows, append(row, seedRatio, floorRatio, floorKong, target, verdict, floorVerdict, fmt.Sprint(v.fail)))
	}
	table("Against the seeds' own code: wall time per run (ms), side by side",
		fmt.Sprintf("%d interleaved rounds after %d warm-up rounds, order rotating. ÷empty, ÷flock, ÷seed and ÷floor are medians over rounds of (variant / baseline in the same round); ÷seed compares each leasewrap run with its seed's code doing the same protocol work (release builds of lease/*/testdata/*; flock(1) for the flock kind), ÷floor with its kind's floor program (the same protocol work through leasewrap's lease package in the smallest Go program that forwards signals: no command line, no supervisor, no anchoring or job form). ÷(floor + kong) is, per round, the run over its floor plus kong's cost in that round (kong2 − empty), issue 24's per-run target (≤ 1.15). \"floor + kong\" is each target's ratio for the floor plus kong's cost in the same round (kong2 − empty): **blocked** where even that misses the target, so no kong command line in Go can meet it with this protocol work. CPU = user+sys (rusage), median.", rounds, warmup),
		[]string{"command", "runs", "median", "p95", "CPU median", "÷empty", "÷flock", "÷seed", "÷floor", "÷(floor + kong)", "target", "met", "floor + kong", "failed"}, rows)
	os.Stdout.Sync()
}

// floorCmd is an unstarted run of kind's floor program with args, in the
// environment leasewrap runs get (the same events file).
func floorCmd(e *env, fb floorBins, kind string, args ...string) *exec.Cmd {
	c := exec.Command(fb.path(kind), args...)
	c.Env = e.environ
	return c
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// startupVariant is one command of the start-up section, with its target:
// at most limit × the baseline (empty or flock), 0 for none.
type startupVariant struct {
	name  string
	cmd   func() *exec.Cmd
	base  string // "empty" or "flock": the baseline of the target
	limit float64
	timed
}

// startup times leasewrap's start-up next to a static empty Go program
// (e.empty), a static program that only parses a two-verb kong
// model (e.kong2), `flock -n FILE true` and a static Go program that
// only runs `true` (e.gorun, the floor of any Go wrapper): --version and a light
// admin verb of each kind against the empty program (target ≤ 2×), each
// kind's `run -- true` against flock(1) (target ≤ 2.5×). All variants are
// interleaved round by round, in a rotating order, and every ratio is
// taken inside its round.
func startup(e *env) {
	if e.empty == "" || e.kong2 == "" || e.gorun == "" {
		fatal(fmt.Errorf("startup: -empty, -kong2 and -gorun (static baseline programs) are needed; bench/run.sh builds them"))
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		fatal(err)
	}
	lockFile := filepath.Join(e.dir, "startup-flock.lock")
	claimKey, sessKey, flockKey := e.next(), e.next(), e.next()
	emptySession := filepath.Join(e.sessRoot(), "leases", sid(e.next()))
	if err := os.MkdirAll(emptySession, 0o755); err != nil {
		fatal(err)
	}
	lw := func(args ...string) func() *exec.Cmd { return func() *exec.Cmd { return e.lw(args) } }
	vs := []*startupVariant{
		{name: "empty static Go program", cmd: func() *exec.Cmd { return exec.Command(e.empty) }},
		{name: "static Go program parsing a two-verb kong model", cmd: func() *exec.Cmd { return exec.Command(e.kong2, "hash", "KEY") }, base: "empty"},
		{name: "flock -n FILE true", cmd: func() *exec.Cmd { return exec.Command(e.flock, "-n", lockFile, truePath) }},
		{name: "static Go program running true (no lease)", cmd: func() *exec.Cmd { return exec.Command(e.gorun, truePath) }, base: "flock"},
		{name: "leasewrap --version", cmd: lw("--version"), base: "empty", limit: 2},
		{name: "reserve hash KEY", cmd: lw("reserve", "hash", "KEY"), base: "empty", limit: 2},
		{name: "claim status KEY (no claim)", cmd: lw("claim", "status", "bench:missing", "--root", e.claimRoot()), base: "empty", limit: 2},
		{name: "session owners SID (empty session)", cmd: lw("session", "owners", filepath.Base(emptySession), "--root", e.sessRoot()), base: "empty", limit: 2},
		{name: "flock run FILE -- true", cmd: func() *exec.Cmd { return e.lw(flockKind.argv(e, flockKey, nil, "true")) }, base: "flock", limit: 2.5},
		{name: "claim run -- true", cmd: func() *exec.Cmd { return e.lw(claimKind.argv(e, claimKey, nil, "true")) }, base: "flock", limit: 2.5},
		{name: "reserve run -- true (new key)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, e.next(), nil, "true")) }, base: "flock", limit: 2.5},
		{name: "session run -- true", cmd: func() *exec.Cmd { return e.lw(sessionKind.argv(e, sessKey, nil, "true")) }, base: "flock", limit: 2.5},
	}
	if e.compare != "" {
		// The same run verbs of another build, in the same rounds: a
		// before/after comparison that the machine's drift cannot skew.
		name := filepath.Base(e.compare)
		claimKey2, sessKey2, flockKey2 := e.next(), e.next(), e.next()
		cw := func(argv func() []string) func() *exec.Cmd {
			return func() *exec.Cmd { return e.lwBin(e.compare, argv()) }
		}
		vs = append(vs,
			&startupVariant{name: name + ": --version", cmd: cw(func() []string { return []string{"--version"} }), base: "empty"},
			&startupVariant{name: name + ": reserve hash KEY", cmd: cw(func() []string { return []string{"reserve", "hash", "KEY"} }), base: "empty"},
			&startupVariant{name: name + ": flock run FILE -- true", cmd: cw(func() []string { return flockKind.argv(e, flockKey2, nil, "true") }), base: "flock"},
			&startupVariant{name: name + ": claim run -- true", cmd: cw(func() []string { return claimKind.argv(e, claimKey2, nil, "true") }), base: "flock"},
			&startupVariant{name: name + ": reserve run -- true (new key)", cmd: cw(func() []string { return reserveKind.argv(e, e.next(), nil, "true") }), base: "flock"},
			&startupVariant{name: name + ": session run -- true", cmd: cw(func() []string { return sessionKind.argv(e, sessKey2, nil, "true") }), base: "flock"},
		)
	}
	const warmup = 5
	cmds := make([]func() *exec.Cmd, len(vs))
	for i, v := range vs {
		cmds[i] = v.cmd
	}
	for i, t := range interleave(e.n, warmup, cmds) {
		vs[i].timed = t
	}
	bases := map[string]*startupVariant{"empty": vs[0], "flock": vs[2]}
	var rows [][]string
	for _, v := range vs {
		ok := okOnly(v.wall)
		row := []string{v.name, fmt.Sprint(len(ok)), ms(ok.median()), ms(ok.quantile(0.95)), ms(v.cpu.median())}
		for _, b := range []string{"empty", "flock"} {
			row = append(row, fmt.Sprintf("%.2f", medianF(roundRatios(v.wall, bases[b].wall))))
		}
		target, met := "—", "—"
		if v.limit > 0 {
			r := medianF(roundRatios(v.wall, bases[v.base].wall))
			target = fmt.Sprintf("≤ %.1f × %s", v.limit, v.base)
			met = "yes"
			if !(r <= v.limit) {
				met = "**no**"
			}
		}
		rows = append(rows, append(row, target, met, fmt.Sprint(v.fail)))
	}
	table("Start-up: wall time per run (ms), side by side",
		fmt.Sprintf("%d interleaved rounds after %d warm-up rounds, order rotating. ÷empty and ÷flock are medians over rounds of (variant / baseline in the same round). The empty program and the kong program are built statically by bench/run.sh, like leasewrap. CPU = user+sys (rusage), median.", e.n, warmup),
		[]string{"command", "runs", "median", "p95", "CPU median", "÷empty per round", "÷flock per round", "target", "met", "failed"}, rows)
	os.Stdout.Sync()
}

// timed is one command's runs in interleaved rounds.
type timed struct {
	wall []time.Duration // per round; -1 when the run failed
	cpu  sample          // user+sys of the runs that succeeded
	fail int
}

// interleave runs every command once per round, warmup rounds first (not
// recorded), in an order that rotates each round so that no command always
// runs first; output goes to /dev/null. Ratios are then taken inside each
// round (roundRatios), so a shared machine's drift hits all alike.
func interleave(rounds, warmup int, cmds []func() *exec.Cmd) []timed {
	ts := make([]timed, len(cmds))
	for round := 0; round < rounds+warmup; round++ {
		for k := range cmds {
			i := (k + round) % len(cmds)
			c := cmds[i]()
			c.Stdout, c.Stderr = nil, nil
			start := time.Now()
			err := c.Run()
			d := time.Since(start)
			if round < warmup {
				continue
			}
			t := &ts[i]
			if err != nil {
				t.fail++
				t.wall = append(t.wall, -1)
				continue
			}
			t.wall = append(t.wall, d)
			ru := c.ProcessState.SysUsage().(*syscall.Rusage)
			t.cpu = append(t.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		}
	}
	return ts
}

// okOnly drops failed runs (-1).
func okOnly(s []time.Duration) sample {
	var out sample
	for _, d := range s {
		if d >= 0 {
			out = append(out, d)
		}
	}
	return out
}

// roundRatios returns a[i]/b[i] for the rounds where both ran.
func roundRatios(a, b []time.Duration) []float64 {
	var out []float64
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] >= 0 && b[i] > 0 {
			out = append(out, float64(a[i])/float64(b[i]))
		}
	}
	return out
}

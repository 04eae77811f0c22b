package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// jobCost times what the strict job form costs a run: each kind's `run
// -- true` in the default form (a job cgroup of its own where leasewrap
// can create one) next to the same run with `--job pgroup`, interleaved,
// and reports the median over rounds of the difference (default −
// pgroup) in wall and CPU time. Target: ≤ 0.3 ms for every kind (issue
// 24). Where no cgroup can be created, both forms are the process group
// and the difference is noise around 0.
func jobCost(e *env) {
	type pair struct {
		kind     kind
		key      int
		extraKey bool // a new key each run (the reservation: a replay starts nothing)
	}
	ps := []pair{{kind: flockKind, key: e.next()}, {kind: claimKind, key: e.next()}, {kind: sessionKind, key: e.next()}, {kind: reserveKind, extraKey: true}}
	var cmds []func() *exec.Cmd
	for _, p := range ps {
		for _, extra := range [][]string{{"--job", "pgroup"}, nil} {
			cmds = append(cmds, func() *exec.Cmd {
				key := p.key
				if p.extraKey {
					key = e.next()
				}
				return e.lw(p.kind.argv(e, key, extra, "true"))
			})
		}
	}
	rounds := e.n
	if e.quick {
		rounds = min(rounds, 100)
	}
	ts := interleave(rounds, 5, cmds)
	var rows [][]string
	for i, p := range ps {
		pg, def := ts[2*i], ts[2*i+1]
		var dw, dc []float64
		for r := range min(len(pg.wall), len(def.wall)) {
			if pg.wall[r] >= 0 && def.wall[r] >= 0 {
				dw = append(dw, float64(def.wall[r]-pg.wall[r]))
			}
		}
		if pg.fail == 0 && def.fail == 0 { // cpu is then per round too
			for r := range min(len(pg.cpu), len(def.cpu)) {
				dc = append(dc, float64(def.cpu[r]-pg.cpu[r]))
			}
		}
		d := func(f []float64) string {
			if len(f) == 0 {
				return "—"
			}
			return fmt.Sprintf("%+.3f", medianF(f)/float64(time.Millisecond))
		}
		met := "yes"
		if len(dw) == 0 || medianF(dw) > float64(300*time.Microsecond) {
			met = "**no**"
		}
		rows = append(rows, []string{p.kind.name + " run -- true", fmt.Sprint(len(dw)),
			ms(okOnly(pg.wall).median()), ms(okOnly(def.wall).median()), d(dw), d(dc), "≤ 0.3 ms", met, fmt.Sprint(pg.fail + def.fail)})
	}
	table("The job cgroup's cost per run: default form − `--job pgroup` (ms)",
		fmt.Sprintf("%d interleaved rounds after 5 warm-up rounds, order rotating; Δ = median over rounds of (default form − `--job pgroup`) in the same round, wall and CPU (user+sys of the whole tree, rusage). The reservation runs a new key each time (a replay starts no command, so creates no job cgroup).", rounds),
		[]string{"command", "rounds", "pgroup median", "default median", "Δ wall", "Δ CPU", "target", "met", "failed"}, rows)
	os.Stdout.Sync()
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// variant is one way of running `true`.
type variant struct {
	name string
	cmd  func() *exec.Cmd
	wall sample
	cpu  sample
	rss  []int64 // peak RSS, KiB
	fail int
}

// overhead times `leasewrap KIND run … -- true` against a bare `true` and
// `flock -n FILE true`, interleaved round by round (the order rotates each
// round so no variant always runs first).
func overhead(e *env) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		fatal(err)
	}
	lockFile := filepath.Join(e.dir, "flock.lock")
	claimKey, sessKey := e.next(), e.next()
	vs := []*variant{
		{name: "bare true", cmd: func() *exec.Cmd { return exec.Command(truePath) }},
		{name: "flock -n FILE true", cmd: func() *exec.Cmd { return exec.Command(e.flock, "-n", lockFile, truePath) }},
		{name: "flock run (same FILE)", cmd: func() *exec.Cmd {
			return e.lw(withCmd([]string{"flock", "run", lockFile}, nil, []string{"true"}))
		}},
		{name: "claim run (ptrace)", cmd: func() *exec.Cmd {
			return e.lw(claimKind.argv(e, claimKey, []string{"--anchor", "ptrace"}, "true"))
		}},
		{name: "claim run (gate)", cmd: func() *exec.Cmd {
			return e.lw(claimKind.argv(e, claimKey, []string{"--anchor", "gate"}, "true"))
		}},
		{name: "reserve run (new key)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, e.next(), nil, "true")) }},
		{name: "reserve run (replay)", cmd: func() *exec.Cmd { return e.lw(reserveKind.argv(e, 1, nil, "true")) }},
		{name: "session run", cmd: func() *exec.Cmd { return e.lw(sessionKind.argv(e, sessKey, nil, "true")) }},
	}
	// Publish key 1 once so "replay" measures the already-done path.
	if err := e.lw(reserveKind.argv(e, 1, nil, "true")).Run(); err != nil {
		fatal(fmt.Errorf("prime reserve replay key: %w", err))
	}
	for round := 0; round < e.n+5; round++ {
		for i := range vs {
			v := vs[(i+round)%len(vs)]
			c := v.cmd()
			start := time.Now()
			err := c.Run()
			d := time.Since(start)
			if round < 5 { // warm-up: page cache, directories
				continue
			}
			if err != nil {
				v.fail++
				continue
			}
			v.wall = append(v.wall, d)
			ru := c.ProcessState.SysUsage().(*syscall.Rusage)
			v.cpu = append(v.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
			v.rss = append(v.rss, ru.Maxrss)
		}
	}
	flock := vs[1]
	fmt.Printf("flock kind: leasewrap flock run / flock(1) = %.2f (median of per-round ratios; target ≤ 1.5)\n", medianF(ratios(vs[2].wall, flock.wall)))
	var rows [][]string
	for _, v := range vs {
		var maxRSS int64
		for _, r := range v.rss {
			maxRSS = max(maxRSS, r)
		}
		rows = append(rows, []string{v.name, fmt.Sprint(len(v.wall)), ms(v.wall.median()), ms(v.wall.quantile(0.95)),
			ms(v.wall.iqr()), ms(v.cpu.median()),
			fmt.Sprintf("%.2f", medianF(ratios(v.wall, flock.wall))),
			fmt.Sprintf("%.2f", float64(v.wall.median())/float64(flock.wall.median())),
			fmt.Sprintf("%.1f", float64(maxRSS)/1024), fmt.Sprint(v.fail)})
	}
	table("Wrapper overhead: `… -- true`, wall time per run (ms)",
		fmt.Sprintf("%d interleaved rounds after 5 warm-up rounds; ratio/round = median over rounds of (variant / flock(1) in the same round). CPU = user+sys of the process and its children (rusage). RSS = peak of the wrapper (or its child), rusage maxrss.", e.n),
		[]string{"variant", "runs", "median", "p95", "IQR", "CPU median", "÷flock(1) per round", "÷flock(1) of medians", "peak RSS MiB", "failed"}, rows)
	gate, ptrace := vs[4], vs[3]
	fmt.Printf("claim anchoring: gate / ptrace = %.2f (median of per-round ratios), gate − ptrace = %s ms (medians)\n\n",
		medianF(ratios(gate.wall, ptrace.wall)), ms(gate.wall.median()-ptrace.wall.median()))
	os.Stdout.Sync()
}

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// handoff measures, per kind, the time from the holder losing the lease
// (its child exits, or the whole holder tree is SIGKILLed) to a waiter's
// child writing its first line.
type handoff struct {
	name   string
	holder func(key int, cmd ...string) *exec.Cmd
	waiter func(key int, cmd ...string) *exec.Cmd
	// waiting is a stderr line of the waiter saying it is blocked, or ""
	// when there is none (flock(1) says nothing; a fixed pause is used).
	waiting string
	lat     sample
	fail    int
	errs    []string
}

func handoffs(e *env) []*handoff { return handoffsOf(e, e.bin) }

// handoffsOf is handoffs with the leasewrap binary bin (e.compare for the
// "before" rows).
func handoffsOf(e *env, bin string) []*handoff {
	lockFile := filepath.Join(e.dir, "handover.lock")
	hs := []*handoff{{
		name: "flock(1) (blocks in the kernel)",
		holder: func(_ int, cmd ...string) *exec.Cmd {
			return exec.Command(e.flock, append([]string{lockFile}, cmd...)...)
		},
		waiter: func(_ int, cmd ...string) *exec.Cmd {
			return exec.Command(e.flock, append([]string{"-w", "30", lockFile}, cmd...)...)
		},
	}}
	for _, k := range kinds {
		hs = append(hs, &handoff{
			name:   k.name,
			holder: func(key int, cmd ...string) *exec.Cmd { return e.lwBin(bin, k.argv(e, key, nil, cmd...)) },
			waiter: func(key int, cmd ...string) *exec.Cmd {
				return e.lwBin(bin, k.argv(e, key, []string{"--wait", "30s"}, cmd...))
			},
			waiting: "waiting",
		})
	}
	return hs
}

// handOne runs one hand-over of h on key; crash SIGKILLs the holder's
// tree instead of letting its child exit. The holder's child exits 1 so
// that a reservation is released rather than published (a published key
// is replayed, never run again).
func handOne(h *handoff, key int, crash bool) (time.Duration, error) {
	// The holder's child prints its own pid and its parent's (the
	// wrapper, leader of its own process group under the reaper).
	hold := reaped(h.holder(key, "sh", "-c", "echo up $$ $PPID; cat >/dev/null; exit 1"))
	hp, err := startPiped(hold)
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		hp.stdin.Close()
		hp.wait()
	}()
	up, err := await(hp.stdout, "up ", 10*time.Second)
	if err != nil {
		return 0, fmt.Errorf("holder: %w: %s", err, lastLine(hp.stderr))
	}
	var childPid, wrapperPid int
	if _, err := fmt.Sscanf(up.line, "up %d %d", &childPid, &wrapperPid); err != nil {
		return 0, fmt.Errorf("holder said %q: %w", up.line, err)
	}
	wp, err := startPiped(reaped(h.waiter(key, "echo", "go")))
	if err != nil {
		return 0, err
	}
	defer func() {
		if !ok { // a failed round must not leave a waiter behind
			syscall.Kill(wp.cmd.Process.Pid, syscall.SIGKILL)
		}
		if err := wp.wait(); err != nil && ok {
			fmt.Fprintf(os.Stderr, "lwbench: %s waiter exited: %v\n", h.name, err)
		}
	}()
	if h.waiting != "" {
		if _, err := await(wp.stderr, h.waiting, 10*time.Second); err != nil {
			return 0, fmt.Errorf("waiter: %w", err)
		}
	}
	// Let the waiter settle into its steady state (back-off grown), at a
	// random phase of its polling.
	time.Sleep(time.Duration(300+rand.IntN(300)) * time.Millisecond)
	t0 := time.Now()
	if crash {
		syscall.Kill(-wrapperPid, syscall.SIGKILL)
		syscall.Kill(-childPid, syscall.SIGKILL)
		syscall.Kill(childPid, syscall.SIGKILL)
	} else {
		hp.stdin.Close()
	}
	got, err := await(wp.stdout, "go", 30*time.Second)
	if err != nil {
		return 0, fmt.Errorf("waiter child: %w: %s", err, lastLine(wp.stderr))
	}
	ok = true
	return got.at.Sub(t0), nil
}

func runHandoffs(e *env, crash bool, rounds int) []*handoff {
	hs := handoffs(e)
	for r := 0; r < rounds; r++ {
		for i := range hs {
			h := hs[(i+r)%len(hs)]
			d, err := handOne(h, e.next(), crash) // a fresh key: the waiter's success publishes a reservation
			if err != nil {
				h.fail++
				if len(h.errs) < 3 {
					h.errs = append(h.errs, err.Error())
				}
				continue
			}
			h.lat = append(h.lat, d)
		}
	}
	return hs
}

// execFloor is the time from starting `echo go` to reading its line: the
// part of every latency below that is the waiter's child starting.
func execFloor(n int) sample {
	var s sample
	for i := 0; i < n; i++ {
		c := exec.Command("echo", "go")
		t0 := time.Now()
		p, err := startPiped(c)
		if err != nil {
			fatal(err)
		}
		if got, err := await(p.stdout, "go", 5*time.Second); err == nil {
			s = append(s, got.at.Sub(t0))
		}
		p.wait()
	}
	return s
}

func report(title, note string, hs []*handoff, floor sample) {
	rows := [][]string{{"exec floor (start `echo go`, read its line)", fmt.Sprint(len(floor)), ms(floor.median()), ms(floor.quantile(0.95)), ms(floor.quantile(0.99)), ms(floor.iqr()), "—", "0", ""}}
	flock := hs[0]
	for _, h := range hs {
		rows = append(rows, []string{h.name, fmt.Sprint(len(h.lat)), ms(h.lat.median()), ms(h.lat.quantile(0.95)), ms(h.lat.quantile(0.99)),
			ms(h.lat.iqr()), fmt.Sprintf("%.1f", medianF(ratios(h.lat, flock.lat))), fmt.Sprint(h.fail), strings.Join(h.errs, "; ")})
	}
	table(title, note, []string{"kind", "runs", "p50", "p95", "p99", "IQR", "÷flock(1) per round", "failed", "errors"}, rows)
}

func handover(e *env) {
	rounds := max(e.n/5, 10)
	hs := runHandoffs(e, false, rounds)
	report("Hand-over latency (ms): holder's child exits → waiter's child has run",
		fmt.Sprintf("%d interleaved rounds. The waiter (`--wait 30s`) has been waiting 300–600 ms (random) when the holder's child exits; the time ends when the driver reads the first line of the waiter's child (`echo go`).", rounds),
		hs, execFloor(rounds))
}

func takeover(e *env) {
	rounds := max(e.n/10, 10)
	hs := runHandoffs(e, true, rounds)
	report("Takeover after a crash (ms): SIGKILL of the holder's whole process tree → waiter's child has run",
		fmt.Sprintf("%d interleaved rounds; the holder wrapper's process group and its child's process group are SIGKILLed (nothing is released), the waiter has waited 300–600 ms.", rounds),
		hs, execFloor(rounds))
}

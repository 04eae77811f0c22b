package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// idiom is how a shell holder of a flock lets go: closing its descriptor
// (the last close, which inotify shows as IN_CLOSE_NOWRITE) or unlocking
// it with `flock -u` and keeping it open (no file event at all).
type idiom struct{ name, release string }

var idiomsOf = []idiom{
	{"closes", "exec 9<&-"},
	{"flock -u", "flock -u 9"},
}

// hoVariant is one row of the hand-over section: one round of it returns
// the hand-over latency. base names the row it is compared with in the
// same round (its ÷ column), "" for a baseline.
type hoVariant struct {
	name, base string
	round      func(e *env, key int) (time.Duration, error)
	lat        sample
	ratio      []float64
	fail       int
	errs       []string
}

// idiomOne measures one hand-over from a shell holder that took the lock
// with flock(1) on descriptor 9 and lets go by id, to waiter (a command
// whose argv ends with the child `echo go`): the time from the driver's
// word to the holder until the driver reads the waiter's child's line.
func idiomOne(e *env, lockFile string, id idiom, waiter *exec.Cmd, waiting string) (time.Duration, error) {
	script := fmt.Sprintf(`exec 9<"$1" && %s 9 && echo up $$ && read _ && %s && echo released && exec sleep 30`, e.flock, id.release)
	hp, err := startPiped(reaped(exec.Command("sh", "-c", script, "sh", lockFile)))
	if err != nil {
		return 0, err
	}
	var shPid int
	defer func() {
		if shPid > 0 {
			syscall.Kill(-shPid, syscall.SIGKILL)
		}
		hp.stdin.Close()
		hp.wait()
	}()
	up, err := await(hp.stdout, "up ", 10*time.Second)
	if err != nil {
		return 0, fmt.Errorf("holder: %w: %s", err, lastLine(hp.stderr))
	}
	if _, err := fmt.Sscanf(up.line, "up %d", &shPid); err != nil {
		return 0, fmt.Errorf("holder said %q: %w", up.line, err)
	}
	wp, err := startPiped(reaped(waiter))
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		if !ok {
			syscall.Kill(wp.cmd.Process.Pid, syscall.SIGKILL)
		}
		wp.wait()
	}()
	if waiting != "" {
		if _, err := await(wp.stderr, waiting, 10*time.Second); err != nil {
			return 0, fmt.Errorf("waiter: %w", err)
		}
	}
	time.Sleep(time.Duration(300+rand.IntN(300)) * time.Millisecond)
	t0 := time.Now()
	if _, err := hp.stdin.Write([]byte("\n")); err != nil {
		return 0, fmt.Errorf("holder: %w", err)
	}
	got, err := await(wp.stdout, "go", 30*time.Second)
	if err != nil {
		return 0, fmt.Errorf("waiter child: %w: %s", err, lastLine(wp.stderr))
	}
	ok = true
	return got.at.Sub(t0), nil
}

// idiomVariants are the rows: flock -w and the flock kind's waiter behind
// a shell holder in each idiom, then every kind's waiter behind a holder
// of its own kind whose child exits, against flock(1) behind flock(1).
func idiomVariants(e *env) []*hoVariant {
	lockFile := filepath.Join(e.dir, "idioms.lock")
	if err := os.WriteFile(lockFile, nil, 0o644); err != nil {
		fatal(err)
	}
	var vs []*hoVariant
	for _, id := range idiomsOf {
		base := "flock -w; holder " + id.name
		vs = append(vs, &hoVariant{name: base, round: func(e *env, _ int) (time.Duration, error) {
			return idiomOne(e, lockFile, id, exec.Command(e.flock, "-w", "30", lockFile, "echo", "go"), "")
		}}, &hoVariant{name: "leasewrap flock run --wait; holder " + id.name, base: base, round: func(e *env, _ int) (time.Duration, error) {
			return idiomOne(e, lockFile, id, e.lw(withCmd([]string{"flock", "run", lockFile}, []string{"--wait", "30s"}, []string{"echo", "go"})), "waiting")
		}})
		if e.compare != "" { // the same waiter of another build (-compare), in the same rounds
			vs = append(vs, &hoVariant{name: "-compare build: flock run --wait; holder " + id.name, base: base, round: func(e *env, _ int) (time.Duration, error) {
				return idiomOne(e, lockFile, id, e.lwBin(e.compare, withCmd([]string{"flock", "run", lockFile}, []string{"--wait", "30s"}, []string{"echo", "go"})), "waiting")
			}})
		}
	}
	var hs []*handoff
	for _, h := range handoffs(e) {
		if h.name != reserveKind.name {
			hs = append(hs, h)
		}
	}
	for _, h := range hs {
		v := &hoVariant{name: h.name + " → same kind", round: func(_ *env, key int) (time.Duration, error) { return handOne(h, key, false) }}
		if h != hs[0] {
			v.base = hs[0].name + " → same kind"
		}
		vs = append(vs, v)
	}
	if e.compare != "" {
		// The same kinds run by the older build (-compare), in the same
		// rounds: a before/after the machine's drift cannot skew.
		for _, h := range handoffsOf(e, e.compare)[1:] {
			if h.name == reserveKind.name {
				continue
			}
			vs = append(vs, &hoVariant{name: h.name + " → same kind (-compare build)", base: hs[0].name + " → same kind",
				round: func(_ *env, key int) (time.Duration, error) { return handOne(h, key, false) }})
		}
	}
	return vs
}

// handoverIdioms is the hand-over section of issue 24's targets: every
// row in the same interleaved rounds, each with the per-round ratio to its
// flock -w baseline.
func handoverIdioms(e *env) {
	rounds := max(e.n/5, 10)
	vs := idiomVariants(e)
	byName := map[string]*hoVariant{}
	for _, v := range vs {
		byName[v.name] = v
	}
	for r := 0; r < rounds; r++ {
		got := map[string]time.Duration{}
		for i := range vs {
			v := vs[(i+r)%len(vs)]
			d, err := v.round(e, e.next())
			if err != nil {
				v.fail++
				if len(v.errs) < 3 {
					v.errs = append(v.errs, err.Error())
				}
				continue
			}
			v.lat = append(v.lat, d)
			got[v.name] = d
		}
		for _, v := range vs {
			if b, ok := got[v.base]; ok && v.base != "" && b > 0 {
				if d, ok := got[v.name]; ok {
					v.ratio = append(v.ratio, float64(d)/float64(b))
				}
			}
		}
	}
	rows := [][]string{}
	for _, v := range vs {
		r50, r95 := "—", "—"
		if v.base != "" {
			b := byName[v.base]
			r50 = fmt.Sprintf("%.2f", float64(v.lat.median())/float64(b.lat.median()))
			r95 = fmt.Sprintf("%.2f", float64(v.lat.quantile(0.95))/float64(b.lat.quantile(0.95)))
		}
		perRound := "—"
		if len(v.ratio) > 0 {
			sort.Float64s(v.ratio)
			perRound = fmt.Sprintf("%.2f", medianF(v.ratio))
		}
		rows = append(rows, []string{v.name, fmt.Sprint(len(v.lat)), ms(v.lat.median()), ms(v.lat.quantile(0.95)), ms(v.lat.quantile(0.99)),
			r50, r95, perRound, fmt.Sprint(v.fail), strings.Join(v.errs, "; ")})
	}
	table("Hand-over in both holder idioms (ms): holder lets go → waiter's child has run",
		fmt.Sprintf("%d interleaved rounds. Rows 1–4: a shell holder took the lock with flock(1) on descriptor 9 and, at the driver's word, closes it (`exec 9<&-`: the last close, an inotify event) or unlocks it and keeps it open (`flock -u 9`: no file event); the waiter has waited 300–600 ms (random). Rows 5–: a holder of the same kind whose child exits (its stdin closed), as in the hand-over section. p50 ÷ and p95 ÷ are ratios of the row's quantile to its baseline's (the flock -w row of the same idiom, or flock(1) → flock(1)); per round is the median of the per-round ratios.", rounds),
		[]string{"waiter; holder", "runs", "p50", "p95", "p99", "p50 ÷ base", "p95 ÷ base", "÷ base per round", "failed", "errors"}, rows)
}

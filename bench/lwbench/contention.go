package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// contender starts n commands on one key at once.
type contender struct {
	name string
	cmd  func(key int, cmd ...string) *exec.Cmd
	res  map[int]sample // n → time until the winner ran and all losers exited
	bad  map[int]int    // n → rounds without exactly one winner
}

// contendOnce starts n copies of mk at once, all sharing one stdout pipe;
// the winner's child prints W and then waits on the shared stdin. It
// returns the time from the first start until both the winner's W was read
// and every loser had exited, and how many winners there were.
func contendOnce(n int, mk func(cmd ...string) *exec.Cmd) (time.Duration, int, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return 0, 0, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return 0, 0, err
	}
	out := lines(outR)
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = mk("sh", "-c", "echo W; exec cat >/dev/null")
		cmds[i].Stdin, cmds[i].Stdout = inR, outW
	}
	start := time.Now()
	var (
		mu       sync.Mutex
		lastExit time.Time
		losers   int
		wg       sync.WaitGroup
	)
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			return 0, 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.Wait()
			at := time.Now()
			if err != nil { // the winner exits 0 after stdin closes; losers do not
				mu.Lock()
				losers++
				if at.After(lastExit) {
					lastExit = at
				}
				mu.Unlock()
			}
		}()
	}
	inR.Close()
	outW.Close()
	var firstW time.Time
	winners := 0
	deadline := time.After(30 * time.Second)
	// Wait for the winner's line and n-1 loser exits.
	for firstW.IsZero() || func() bool { mu.Lock(); defer mu.Unlock(); return losers < n-1 }() {
		select {
		case s, ok := <-out:
			if !ok {
				out = nil
				continue
			}
			if s.line == "W" {
				winners++
				if firstW.IsZero() {
					firstW = s.at
				}
			}
		case <-deadline:
			inW.Close()
			wg.Wait()
			return 0, winners, fmt.Errorf("n=%d: no single winner within 30 s (winners %d, losers %d)", n, winners, losers)
		case <-time.After(time.Millisecond):
		}
	}
	mu.Lock()
	end := firstW
	if lastExit.After(end) {
		end = lastExit
	}
	mu.Unlock()
	inW.Close()
	wg.Wait()
	for s := range out { // count late winners, if any
		if s.line == "W" {
			winners++
		}
	}
	return end.Sub(start), winners, nil
}

func contention(e *env) {
	sizes := []int{8, 16, 32, 64}
	rounds := max(e.n/20, 5)
	lockFile := filepath.Join(e.dir, "contention.lock")
	cs := []*contender{{name: "flock -n FILE", cmd: func(_ int, cmd ...string) *exec.Cmd {
		return exec.Command(e.flock, append([]string{"-n", lockFile}, cmd...)...)
	}}}
	for _, k := range kinds {
		cs = append(cs, &contender{name: k.name, cmd: func(key int, cmd ...string) *exec.Cmd { return e.lw(k.argv(e, key, nil, cmd...)) }})
	}
	for _, c := range cs {
		c.res, c.bad = map[int]sample{}, map[int]int{}
	}
	for r := 0; r < rounds; r++ {
		for _, n := range sizes {
			for i := range cs {
				c := cs[(i+r)%len(cs)]
				key := e.next()
				d, winners, err := contendOnce(n, func(cmd ...string) *exec.Cmd { return c.cmd(key, cmd...) })
				if err != nil || winners != 1 {
					c.bad[n]++
					if err != nil {
						fmt.Fprintln(os.Stderr, "lwbench: contention", c.name, err)
					} else {
						fmt.Fprintf(os.Stderr, "lwbench: contention %s n=%d: %d winners\n", c.name, n, winners)
					}
					continue
				}
				c.res[n] = append(c.res[n], d)
			}
		}
	}
	var rows [][]string
	for _, c := range cs {
		row := []string{c.name}
		for _, n := range sizes {
			row = append(row, fmt.Sprintf("%s (%s)", ms(c.res[n].median()), ms(c.res[n].iqr())))
		}
		per8 := float64(c.res[8].median()) / 8
		row = append(row, fmt.Sprintf("%.2f", float64(c.res[64].median())/64/per8))
		row = append(row, fmt.Sprintf("%.1f", float64(c.res[64].median())/float64(cs[0].res[64].median())))
		var bad []string
		for _, n := range sizes {
			if c.bad[n] > 0 {
				bad = append(bad, fmt.Sprintf("n=%d: %d", n, c.bad[n]))
			}
		}
		row = append(row, strings.Join(bad, ", "))
		rows = append(rows, row)
	}
	header := []string{"kind"}
	for _, n := range sizes {
		header = append(header, fmt.Sprintf("n=%d median (IQR)", n))
	}
	header = append(header, "per-wrapper cost 64 ÷ 8", "÷flock(1) at 64", "rounds without exactly one winner")
	table("Contention (ms): n wrappers started at once on one key → winner's child ran and all losers exited",
		fmt.Sprintf("%d rounds per size, kinds interleaved. The driver starts the n processes back to back (that start loop is part of the time, for flock(1) too). Per-wrapper cost 64 ÷ 8 is (t64/64)/(t8/8): ≤ 1 means linear or better.", rounds),
		header, rows)
}

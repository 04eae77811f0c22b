package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/claim"
)

// TestClaimAcquireRaceAcrossProcesses runs 16 real `leasewrap claim
// acquire` processes on one key, 20 rounds: exactly one exits 0 per round,
// every other exits 1 naming the winner, and the surviving file parses and
// names the winner. The recorded pid is this test process, so the winner
// stays live for the losers. The claim is released between rounds.
func TestClaimAcquireRaceAcrossProcesses(t *testing.T) {
	const procs, rounds = 16, 20
	root, work := t.TempDir(), t.TempDir()
	pid := strconv.Itoa(os.Getpid())
	c := claim.New(claim.Options{Root: root, EventsDir: work, Getenv: func(string) string { return "" }})
	for round := range rounds {
		type result struct {
			code int
			out  map[string]any
			raw  string
		}
		res := make([]result, procs)
		var wg sync.WaitGroup
		for i := range procs {
			cmd := leasewrapCmd(t, "claim", "acquire", "node:race", "--holder", fmt.Sprintf("w%02d", i), "--root", root, "--pid", pid)
			cmd.Env = append(cmd.Env, "FNO_EVENTS_PATH=")
			cmd.Dir = work
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				err := cmd.Wait()
				var ee *exec.ExitError
				switch {
				case err == nil:
				case errors.As(err, &ee):
					res[i].code = ee.ExitCode()
				default:
					res[i].code = -1
				}
				res[i].raw = stdout.String() + stderr.String()
				json.Unmarshal(stdout.Bytes(), &res[i].out)
			})
		}
		wg.Wait()
		winner := ""
		for i, r := range res {
			if r.code == 0 {
				if winner != "" {
					t.Fatalf("round %d: two winners, %s and w%02d", round, winner, i)
				}
				winner = fmt.Sprintf("w%02d", i)
				if r.out["outcome"] != "acquired" || r.out["holder"] != winner {
					t.Errorf("round %d: winner printed %s", round, r.raw)
				}
			}
		}
		if winner == "" {
			t.Fatalf("round %d: no winner: %+v", round, res)
		}
		for i, r := range res {
			if r.code == 0 {
				continue
			}
			if r.code != cli.AdminHeld || r.out["outcome"] != "held_by_other" || r.out["holder"] != winner {
				t.Errorf("round %d: w%02d: want exit 1 held_by_other naming %s, have exit %d: %s", round, i, winner, r.code, r.raw)
			}
		}
		st := c.Status("node:race")
		if st.State != claim.Live || st.Record == nil || st.Record.Holder != winner {
			t.Fatalf("round %d: want the file to parse as %s's live claim, have %+v", round, winner, st)
		}
		if err := c.Release(t.Context(), "node:race", winner); err != nil {
			t.Fatal(err)
		}
	}
}

package claim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// helperEnv switches the test binary into a helper process (TestMain).
const helperEnv = "CLAIM_TEST_HELPER"

type helperOut struct {
	Outcome string `json:"outcome"` // acquired, held, error, appended
	Holder  string `json:"holder,omitempty"`
	Err     string `json:"err,omitempty"`
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain(os.Args[len(os.Args)-4:]))
	}
	os.Exit(m.Run())
}

// helperMain: args are go-file, verb, a, b. It waits for go-file (the
// start barrier), runs the verb once and prints a helperOut.
func helperMain(args []string) int {
	goFile, verb, a, b := args[0], args[1], args[2], args[3]
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println(`{"outcome":"error","err":"start barrier never opened"}`)
			return 1
		}
		time.Sleep(time.Millisecond)
	}
	var out helperOut
	ctx := context.Background()
	switch verb {
	case "append": // a = events path, b = line
		c := New(Options{Getenv: testEnv(nil)})
		if err := c.appendEventLine(ctx, a, []byte(b), 2*staleMutexSteal); err != nil {
			out = helperOut{Outcome: "error", Err: err.Error()}
		} else {
			out.Outcome = "appended"
		}
	case "acquire": // a = root, b = holder
		c := New(Options{Root: a, EventsDir: a, Getenv: testEnv(nil)})
		// The parent test process is the recorded pid: it outlives every
		// helper, so the winner's claim stays Live for the losers.
		_, err := c.Acquire(ctx, "session:race", b, AcquireOptions{PID: os.Getppid()})
		out = outcome(err)
	case "acquire-prepared", "prepare-and-die": // a = root, b = holder
		// A run verb's waiter: its Wake has prepared the claim's file
		// before the attempt (or it is SIGKILLed holding it).
		l, err := NewLocker(LockerConfig{Key: "session:race", Holder: b, Root: a, EventsDir: a, Getenv: testEnv(nil)})
		if err == nil {
			var w interface {
				Wait(context.Context, error, time.Duration) (bool, error)
			}
			if w, err = l.Notify(ctx); err == nil {
				_, err = w.Wait(ctx, nil, time.Millisecond)
			}
		}
		if err == nil && !l.prep.ready() {
			err = errors.New("the Wake prepared no claim file")
		}
		if err == nil && verb == "prepare-and-die" {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		if err == nil {
			_, err = l.AcquireAnchored(ctx, os.Getppid())
		}
		out = outcome(err)
	case "probe-then-acquire": // a = root, b = holder: a waiter's attempt, held open between its steps
		l, err := NewLocker(LockerConfig{Key: "session:race", Holder: b, Root: a, EventsDir: a, Getenv: testEnv(nil)})
		if err == nil {
			var path string
			if path, err = l.claims.Path(l.cfg.Key); err == nil {
				err = os.MkdirAll(filepath.Dir(path), dirMode) // as a waiter's Notify does
			}
		}
		if err == nil {
			if err = l.Probe(ctx); err == nil {
				os.WriteFile(filepath.Join(a, "probed-"+b), nil, 0o644)
				for _, serr := os.Stat(filepath.Join(a, "go-acquire")); serr != nil && time.Now().Before(deadline); _, serr = os.Stat(filepath.Join(a, "go-acquire")) {
					time.Sleep(time.Millisecond)
				}
				_, err = l.AcquireAnchored(ctx, os.Getppid())
			}
		}
		out = outcome(err)
	}
	json.NewEncoder(os.Stdout).Encode(out)
	return 0
}

// outcome is a helper's report of an acquire's error: acquired, held
// (by whom: the protocol's or the Locker's contention error) or error.
func outcome(err error) helperOut {
	var held *HeldByOtherError
	var lheld *lease.HeldError
	switch {
	case err == nil:
		return helperOut{Outcome: "acquired"}
	case errors.As(err, &held):
		return helperOut{Outcome: "held", Holder: held.Holder}
	case errors.As(err, &lheld):
		return helperOut{Outcome: "held", Holder: lheld.Holder}
	}
	return helperOut{Outcome: "error", Err: err.Error()}
}

// runHelpers starts n helper processes, opens the start barrier once all
// run, and returns their outcomes.
func runHelpers(t *testing.T, n int, dir string, args func(i int) []string) []helperOut {
	t.Helper()
	goFile := filepath.Join(t.TempDir(), "go")
	cmds := make([]*exec.Cmd, n)
	outs := make([]strings.Builder, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", goFile}, args(i)...)...)
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		cmd.Stdout = &outs[i]
		cmd.Stderr = os.Stderr
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	res := make([]helperOut, n)
	for i, cmd := range cmds {
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				res[i] = helperOut{Outcome: "error", Err: fmt.Sprintf("exit: %v: %s", err, outs[i].String())}
				return
			}
			if err := json.Unmarshal([]byte(outs[i].String()), &res[i]); err != nil {
				res[i] = helperOut{Outcome: "error", Err: fmt.Sprintf("output %q: %v", outs[i].String(), err)}
			}
		})
	}
	wg.Wait()
	return res
}

func TestSimultaneousAcquireHasExactlyOneWinner(t *testing.T) {
	root := t.TempDir()
	outs := runHelpers(t, 8, root, func(i int) []string {
		return []string{"acquire", root, fmt.Sprintf("pty:w%d", i)}
	})
	winner := oneWinner(t, outs)
	if rec := readClaim(t, root, "session:race"); rec.Holder != winner {
		t.Errorf("file holder %s, want %s", rec.Holder, winner)
	}
}

// oneWinner checks that exactly one helper (pty:w<i>) acquired and that
// every loser named it; it returns the winner.
func oneWinner(t *testing.T, outs []helperOut) string {
	t.Helper()
	winner := ""
	for i, o := range outs {
		switch o.Outcome {
		case "acquired":
			if winner != "" {
				t.Errorf("two winners: %s and pty:w%d", winner, i)
			}
			winner = fmt.Sprintf("pty:w%d", i)
		case "held":
		default:
			t.Errorf("helper %d: want acquired or held, have %+v", i, o)
		}
	}
	if winner == "" {
		t.Fatalf("want exactly one winner, have none: %+v", outs)
	}
	// Losers saw the winner's identity; the surviving file parses.
	for i, o := range outs {
		if o.Outcome == "held" && o.Holder != winner {
			t.Errorf("helper %d saw holder %s, want %s", i, o.Holder, winner)
		}
	}
	return winner
}

package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
)

// flockHabits are flock(1)'s flags on flock run with flock(1)'s meaning,
// mapped onto the run flags (apply); those leasewrap cannot honour are
// refused by flockRefusals.
type flockHabits struct {
	Exclusive bool   `short:"x" help:"flock(1)'s -x: exclusive, the default."`
	NonBlock  bool   `short:"n" name:"nonblock" help:"flock(1)'s -n: try once, the default."`
	Seconds   string `short:"w" name:"wait-seconds" placeholder:"SECONDS" help:"flock(1)'s -w: --wait in seconds."`
	ExitCode  string `short:"E" name:"conflict-exit" placeholder:"CODE" help:"flock(1)'s -E: --conflict-exit-code."`
}

// flockRefusals refuses, before parsing, flock(1)'s flags flock run cannot
// honour, saying what to write instead. A -c after the command's first word
// is the command's, as in flock(1).
func flockRefusals(verb string, args []string) error {
	var path string
	commandAt := -1
	for i, a := range args {
		if a == "--" {
			break
		}
		name, value, _ := strings.Cut(a, "=")
		switch name {
		case "-c", "--command", "-o", "--close", "-u", "--unlock", "-F", "--no-fork", "--verbose":
		default:
			continue
		}
		if commandAt < 0 { // the model is built on this rare path only
			keys, at := flockRunLayout(args)
			if commandAt = at; len(keys) > 0 {
				path = keys[0]
			}
		}
		if i >= commandAt {
			break
		}
		if path == "" {
			path = "PATH"
		}
		var why string
		switch name {
		case "-c", "--command":
			if value == "" && i+1 < len(args) {
				value = args[i+1]
			}
			why = fmt.Sprintf("flock(1)'s -c CMD: leasewrap runs the command after --: leasewrap flock run %s -- sh -c %s", cli.ShellQuote(path), cli.ShellQuote(value))
		case "-o", "--close":
			why = "flock(1)'s -o (close the lock before running the command): leasewrap hands the lock to the command on purpose (LEASEWRAP_FD), so that it outlives a killed leasewrap; a command that must not pass it on closes it (exec 3>&-)"
		case "-u", "--unlock":
			why = "flock(1)'s -u (unlock a descriptor): leasewrap releases the lock when the job ends; there is nothing to unlock"
		case "-F", "--no-fork":
			why = "flock(1)'s -F (exec without forking): leasewrap stays beside the command to forward signals and settle the lock; there is no such mode"
		case "--verbose":
			why = "flock(1)'s --verbose: use leasewrap --log-level debug flock run …"
		}
		return fmt.Errorf("flock run: %w: %s", cli.ErrUsage, why)
	}
	return nil
}

// flockRunLayout is flock run's PATH and where its command starts in args
// (cli.CommandAt over flock run's model).
func flockRunLayout(args []string) ([]string, int) {
	var m struct {
		cli.Globals `embed:""`
		Flock       flockCmd `cmd:""`
	}
	p, err := kong.New(&m, kong.Name("leasewrap"))
	if err != nil {
		return nil, len(args)
	}
	keys, at := cli.CommandAt(p.Model.Node, args, "-c", "--command")
	if at < 0 {
		return nil, len(args)
	}
	return keys, at
}

// apply checks the flock(1) flags and sets the run flags they stand for.
func (h *flockHabits) apply(shared bool, f *cli.RunFlags) error {
	switch {
	case h.Exclusive && shared:
		return fmt.Errorf("%w: -x (exclusive) and -s (shared) contradict each other", cli.ErrUsage)
	}
	if h.Seconds != "" {
		secs, err := strconv.ParseFloat(h.Seconds, 64)
		if err != nil || secs < 0 || math.IsNaN(secs) || secs > (1<<63-1)/float64(time.Second) {
			return fmt.Errorf("%w: -w %s: want seconds, as flock(1) takes them (30, 0.5); or --wait with a unit (30s, 5m)", cli.ErrUsage, h.Seconds)
		}
		if f.Wait != 0 {
			return fmt.Errorf("%w: -w %s and --wait %v: give one of them", cli.ErrUsage, h.Seconds, f.Wait)
		}
		f.Wait = time.Duration(secs * float64(time.Second))
	}
	if h.NonBlock && f.Wait != 0 {
		return fmt.Errorf("%w: -n (fail at once when held) and a wait of %v contradict each other", cli.ErrUsage, f.Wait)
	}
	if h.ExitCode != "" {
		code, err := strconv.Atoi(h.ExitCode)
		if err != nil || code < 0 || code > 255 {
			return fmt.Errorf("%w: -E %s: want an exit code, 0..255", cli.ErrUsage, h.ExitCode)
		}
		if f.ConflictExitCode != cli.ExitConflict && f.ConflictExitCode != code {
			return fmt.Errorf("%w: -E %d and --conflict-exit-code %d: give one of them", cli.ErrUsage, code, f.ConflictExitCode)
		}
		f.ConflictExitCode = code
	}
	return nil
}

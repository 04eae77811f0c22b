// Package floor is what the floor programs of `make bench` share: the work
// any Go supervisor of a lease must do, without leasewrap's command line,
// supervisor, logging or safety extras. Each floor program (floorflock,
// floorclaim, floorsession, floorreserve) builds one kind's Locker from
// plain arguments and calls Run, so lwbench can put, in the same rounds,
// leasewrap's `run -- true` next to the same protocol work done by the
// smallest Go program that still forwards signals: the difference is
// leasewrap's own cost (CLI, supervision, anchoring, job form, logs).
package floor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/leasewrap/leasewrap/lease"
)

// Forwarded are the signals Run catches besides SIGCHLD: leasewrap's
// supervisor.ForwardedSignals, written out so that a floor program does
// not link the supervisor (TestForwardedIsTheSupervisors keeps them the
// same).
var Forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGTSTP, syscall.SIGCONT}

// Run registers the signals a supervisor catches (Forwarded and SIGCHLD,
// as leasewrap's supervisor does: os/signal enables each with a round
// trip to the runtime's signal-mask thread), takes the lease once,
// starts argv (an absolute path) with the lease's descriptor and
// environment, waits for it, settles the lease with its status and
// returns the exit code: 75 when held, the recorded code for a replay, 70
// on an error.
func Run(l lease.Locker, argv []string) int {
	signal.Notify(make(chan os.Signal, 8), Forwarded...)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGCHLD)
	ctx := context.Background()
	ls, err := l.Acquire(ctx)
	var replay *lease.ReplayError
	switch {
	case errors.As(err, &replay):
		return replay.ExitCode
	case errors.Is(err, lease.ErrHeld):
		return 75
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 70
	}
	files := []uintptr{0, 1, 2}
	env := append(os.Environ(), ls.Env()...)
	if fh, ok := ls.(lease.FileHolder); ok && fh.File() != nil {
		files = append(files, fh.File().Fd())
		env = append(env, "LEASEWRAP_FD=3")
	}
	pid, _, err := syscall.StartProcess(argv[0], argv, &syscall.ProcAttr{Env: env, Files: files})
	if err != nil {
		ls.Finish(ctx, lease.Result{ExitCode: 127})
		return 127
	}
	if a, ok := l.(lease.Anchor); ok {
		a.Started(ctx, ls) // a claim's audit events
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			break
		}
	}
	res := lease.Result{ExitCode: ws.ExitStatus()}
	if ws.Signaled() {
		res.Signal, res.ExitCode = ws.Signal(), 128+int(ws.Signal())
	}
	if err := ls.Finish(ctx, res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 70
	}
	return res.ExitCode
}

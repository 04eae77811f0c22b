package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/oklog/run"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// DefaultHookTimeout bounds a hook when Config.HookTimeout is 0: room for
// the ping recipe `curl -fsS -m 10 --retry 3 URL` (four tries of at most
// 10 s and curl's 1, 2 and 4 s pauses between them: 47 s) with time to
// spare, and still short beside the schedule of a job run by cron.
const DefaultHookTimeout = time.Minute

// The environment a hook gets besides the lease's own.
const (
	EnvOutcome  = "LEASEWRAP_OUTCOME"          // on-start: started; on-exit: ran, lost, timeout or error
	EnvExitCode = "LEASEWRAP_EXIT_CODE"        // on-exit: the status leasewrap exits with
	EnvDuration = "LEASEWRAP_DURATION_SECONDS" // on-exit: how long the command ran
)

// hookWaitDelay bounds how long a hook's captured output is read after
// the hook itself ended (a process it left behind keeps the pipe open).
const hookWaitDelay = time.Second

// hookOutputMax bounds the output of a hook kept under -q (shown only if
// it fails).
const hookOutputMax = 64 << 10

// onStart runs the on-start hook for j under ls, taken by an attempt
// that began at at, before the command starts. The lease is kept while
// the hook runs: a keeper renews it (its fence a timer of its own), and
// a loss, pushed or at the fence, kills the hook. Once it is over, a TTL
// lease is renewed once more, so that the job's fence counts from a
// renewal made after the hook. It returns the monotonic start of that
// renewal (at, for a lease without TTL or without a hook), or an error
// matching lease.ErrHeld when the lease was lost meanwhile (the command
// must not run; the caller settles the lease as never run), or ctx's
// error when the run was aborted.
func (r *runner) onStart(ctx context.Context, j *job, ls lease.Lease, at time.Time) (time.Time, error) {
	if r.cfg.OnStart == "" {
		return at, nil
	}
	// Renewals never overlap: one abandoned by the keeper when the hook
	// ended still holds the slot, and the renewal after the hook waits
	// for it.
	slot := make(chan struct{}, 1)
	renewFn := func(ctx context.Context) error {
		select {
		case slot <- struct{}{}:
			defer func() { <-slot }()
			return ls.Renew(ctx)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var lastOK = at // written by the keeper's goroutine, read after g.Run
	rc := r.cfg.renewConfig(ls.TTL(), renewFn)
	rc.OnRenew = func(started time.Time, _ time.Duration, err error) {
		if err == nil {
			lastOK = started
		}
	}
	k, err := renew.New(rc, at)
	if err != nil {
		return at, err // checked before (ValidateTiming)
	}
	env := r.hookEnv(j, ls, "started")
	var g run.Group
	// The hook: its end ends the group.
	actor(&g, ctx, func(ctx context.Context) error {
		r.runHook(ctx, "on-start", r.cfg.OnStart, env)
		return nil
	})
	// The keeper: a loss at the fence or a permanent error ends the group.
	actor(&g, ctx, func(ctx context.Context) error {
		err := k.Run(ctx)
		if err == nil {
			<-ctx.Done()
			return nil
		}
		return err
	})
	// The lease's own loss, pushed.
	actor(&g, ctx, func(ctx context.Context) error {
		select {
		case <-ls.Done():
			return fmt.Errorf("%w: the lease's record was removed or revoked", lease.ErrLost)
		case <-ctx.Done():
			return nil
		}
	})
	if err := g.Run(); err != nil {
		return at, fmt.Errorf("%w: the lease was lost while the on-start hook ran (%v); the command did not run", lease.ErrHeld, err)
	}
	if err := ctx.Err(); err != nil {
		return at, err
	}
	if ls.TTL() == 0 {
		return lastOK, nil
	}
	fence, _ := rc.Deadline(lastOK)
	rctx, cancel := context.WithDeadline(ctx, fence)
	defer cancel()
	now := time.Now()
	if err := renewFn(rctx); err != nil {
		return at, fmt.Errorf("%w: the lease could not be renewed after the on-start hook (%v); the command did not run", lease.ErrHeld, err)
	}
	return now, nil
}

// onExit runs the on-exit hook after the lease of a run that held it was
// settled (res, err: what Run returns).
func (r *runner) onExit(ctx context.Context, j *job, ls lease.Lease, res Result, err error) {
	if r.cfg.OnExit == "" {
		return
	}
	outcome := "error"
	switch {
	case err != nil:
	case res.Outcome == Ran:
		outcome = "ran"
	case res.Outcome == Lost:
		outcome = "lost"
	case res.Outcome == TimedOut:
		outcome = "timeout"
	}
	code := res.ExitCode
	if r.cfg.ExitCode != nil {
		code = r.cfg.ExitCode(res, err)
	}
	env := append(r.hookEnv(j, ls, outcome),
		EnvExitCode+"="+strconv.Itoa(code),
		EnvDuration+"="+strconv.FormatFloat(res.Runtime.Seconds(), 'f', 3, 64))
	// The run's own context may have ended (it is not the hook's): the
	// hook is bounded by its timeout only.
	r.runHook(context.WithoutCancel(ctx), "on-exit", r.cfg.OnExit, env)
}

// hookEnv is the lease's environment as the command gets it (without
// the descriptor: a hook left running must not hold a flock) and the
// outcome.
func (r *runner) hookEnv(j *job, ls lease.Lease, outcome string) []string {
	var cmd exec.Cmd
	inherit.Attach(&cmd, r.cfg.Env, inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: ls.Holder(), Env: ls.Env()})
	return append(cmd.Env, EnvOutcome+"="+outcome)
}

// runHook runs sh -c script in a process group of its own, with env, its
// stdin /dev/null and its output on leasewrap's stderr (kept back and
// shown only if it fails when info is not logged: -q). At the hook
// timeout, or when ctx ends, the group is killed. A failure is logged,
// never returned: a hook does not change the run.
func (r *runner) runHook(ctx context.Context, name, script string, env []string) {
	log := r.cfg.Logger
	timeout := r.cfg.HookTimeout
	if timeout == 0 {
		timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env, cmd.Dir = env, r.cfg.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = hookWaitDelay
	quiet := !log.Enabled(ctx, slog.LevelInfo)
	var kept *capped
	if quiet {
		kept = &capped{max: hookOutputMax}
		cmd.Stdout, cmd.Stderr = kept, kept
	} else {
		cmd.Stdout, cmd.Stderr = r.cfg.Stderr, r.cfg.Stderr
	}
	start := time.Now()
	log.Debug("running the "+name+" hook", "hook", script)
	err := cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	if err == nil {
		log.Info(name+" hook done", "duration", took)
		return
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		err = fmt.Errorf("killed at the hook timeout (%v)", timeout)
	case ctx.Err() != nil:
		err = fmt.Errorf("killed: %w", context.Cause(ctx))
	case errors.As(err, &ee) && ee.Exited():
		err = fmt.Errorf("exited with status %d", ee.ExitCode())
	}
	if kept != nil {
		r.cfg.Stderr.Write(kept.Bytes())
	}
	log.Error(name+" hook failed; the run goes on as if it had not", "hook", script, "err", err.Error(), "duration", took)
}

// capped is a buffer that keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.max - c.Len(); room < len(p) {
		c.dropped += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	c.Buffer.Write(p)
	return n, nil
}

func (c *capped) Bytes() []byte {
	if c.dropped == 0 {
		return c.Buffer.Bytes()
	}
	return append(c.Buffer.Bytes(), fmt.Sprintf("\n[%d more bytes of hook output dropped]\n", c.dropped)...)
}

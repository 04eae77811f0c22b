package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/oklog/run"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// The environment a hook gets besides the lease's own.
const (
	EnvOutcome  = "LEASEWRAP_OUTCOME"          // on-start: started; on-exit: ran, lost, timeout or error
	EnvExitCode = "LEASEWRAP_EXIT_CODE"        // on-exit: the status leasewrap exits with
	EnvDuration = "LEASEWRAP_DURATION_SECONDS" // on-exit: how long the command ran
)

// hookDrain bounds how long a hook's output is read after it was killed:
// a process that escaped the kill may hold the pipe.
const hookDrain = time.Second

// hookOutputMax bounds the output of a hook kept under -q.
const hookOutputMax = 64 << 10

// onStart runs the on-start hook under ls, taken by an attempt begun at at.
// A keeper renews the lease meanwhile and a loss kills the hook; then a TTL
// lease is renewed once more, and the start of that renewal returned, for
// the fence to count from. A loss is an error matching lease.ErrHeld.
func (r *runner) onStart(ctx context.Context, j *job, ls lease.Lease, at time.Time) (time.Time, error) {
	if r.cfg.OnStart == "" {
		return at, nil
	}
	// Renewals never overlap: the one after the hook waits for an abandoned one.
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
	var killed error // why the hook was killed before it ended, if it was
	actor(&g, ctx, func(ctx context.Context) error {
		killed = r.runHook(ctx, "on-start", r.cfg.OnStart, env)
		return nil
	})
	actor(&g, ctx, func(ctx context.Context) error {
		err := k.Run(ctx)
		if err == nil {
			<-ctx.Done()
			return nil
		}
		return err
	})
	actor(&g, ctx, func(ctx context.Context) error {
		select {
		case <-ls.Done():
			return fmt.Errorf("%w: the lease's record was removed or revoked", lease.ErrLost)
		case <-ctx.Done():
			return nil
		}
	})
	if err := g.Run(); err != nil {
		r.cfg.Logger.Warn("the lease was lost while the on-start hook ran; the hook was killed and the command does not run", "hook", r.cfg.OnStart, "err", err.Error())
		return at, fmt.Errorf("%w: the lease was lost while the on-start hook ran (%v); the command did not run", lease.ErrHeld, err)
	}
	if err := ctx.Err(); err != nil {
		if killed != nil {
			r.cfg.Logger.Info("on-start hook killed: the run was stopped while it ran; the command does not run", "hook", r.cfg.OnStart, "why", killed.Error())
		}
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

// onExit runs the on-exit hook after the lease was settled.
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
	// The run's context may have ended: the hook is bounded by its timeout only.
	r.runHook(context.WithoutCancel(ctx), "on-exit", r.cfg.OnExit, env)
}

// hookEnv is the lease's environment without the descriptor (a hook left
// running must not hold a flock), and the outcome.
func (r *runner) hookEnv(j *job, ls lease.Lease, outcome string) []string {
	var cmd exec.Cmd
	inherit.Attach(&cmd, r.cfg.Env, inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: ls.Holder(), Env: ls.Env()})
	return append(cmd.Env, EnvOutcome+"="+outcome)
}

// runHook runs sh -c script in a hookBox, its output copied to stderr
// (under -q, only if it fails). What the shell leaves running is killed
// when it exits, all of it at the hook timeout or when ctx ends. A failure
// is logged, never returned; when ctx ended first, its cause is returned.
func (r *runner) runHook(ctx context.Context, name, script string, env []string) (interrupted error) {
	log := r.cfg.Logger
	var hctx context.Context
	var cancel context.CancelFunc
	limit := "none"
	if r.cfg.HookTimeout > 0 {
		hctx, cancel = context.WithTimeout(ctx, r.cfg.HookTimeout)
		limit = r.cfg.HookTimeout.String()
	} else {
		hctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	quiet := !log.Enabled(ctx, slog.LevelInfo)
	var out io.Writer = r.cfg.Stderr
	var kept *capped
	if quiet {
		kept = &capped{max: hookOutputMax}
		out = kept
	}
	failed := func(err error, took time.Duration) {
		if kept != nil {
			r.cfg.Stderr.Write(kept.Bytes())
		}
		log.Error(name+" hook failed; the run goes on as if it had not", "hook", script, "err", err.Error(), "duration", took)
	}

	box := r.newHookBox(log)
	defer box.close(log)
	pr, pw, err := os.Pipe()
	if err != nil {
		failed(fmt.Errorf("no pipe for its output: %w", err), 0)
		return nil
	}
	cmd := exec.CommandContext(hctx, "/bin/sh", "-c", script)
	cmd.Env, cmd.Dir = env, r.cfg.Dir
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if box.cg != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, box.cg.FD()
	}
	cmd.Cancel = func() error { box.kill(cmd.Process.Pid); return nil }
	start := time.Now()
	log.Debug("running the "+name+" hook", "hook", script, "timeout", limit, "in", box.form())
	err = cmd.Start()
	pw.Close() // the hook has its copies
	if err != nil {
		pr.Close()
		failed(fmt.Errorf("could not start /bin/sh: %w", err), 0)
		return nil
	}
	pgid := cmd.Process.Pid

	var left []member
	copied := make(chan struct{})
	var g run.Group
	// The output; a plain Writer: no splice(2) that closing the pipe might not end.
	g.Add(func() error {
		io.Copy(struct{ io.Writer }{out}, pr)
		close(copied)
		return nil
	}, func(error) { pr.Close() })
	// The hook, bounded by itself (the timeout, ctx), so not interrupted.
	g.Add(func() error {
		err = cmd.Wait()
		if left = box.members(pgid); len(left) > 0 || box.cg != nil {
			box.kill(pgid) // a cgroup's kill is safe when empty; a group's only while it has members
		}
		if hctx.Err() != nil {
			left = nil // killed at the timeout or for ctx: said so below
		}
		select {
		case <-copied:
		case <-time.After(hookDrain):
		}
		return nil
	}, func(error) {})
	g.Run()

	took := time.Since(start).Round(time.Millisecond)
	if len(left) > 0 {
		defer log.Info(name+" hook left processes running; they were killed with it", "count", len(left), "first", fmt.Sprint(firstMembers(left)))
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		log.Info(name+" hook done", "duration", took)
		return nil
	case errors.Is(hctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		err = fmt.Errorf("killed at the hook timeout (%v)", r.cfg.HookTimeout)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.As(err, &ee) && ee.Exited():
		err = fmt.Errorf("exited with status %d", ee.ExitCode())
	}
	failed(err, took)
	return nil
}

// hookBox holds a hook together: a cgroup of its own, else its process group.
type hookBox struct{ cg *cgroup.Group }

// newHookBox creates the hook's cgroup beside the job's where --job allows one.
func (r *runner) newHookBox(log *slog.Logger) *hookBox {
	b := &hookBox{}
	if r.cfg.Job == JobPgroup {
		return b
	}
	var err error
	if b.cg, err = r.cfg.newCgroup(nil); err != nil {
		log.Debug("hooks run in a process group of their own (no cgroup)", "why", err.Error())
	}
	return b
}

func (b *hookBox) form() string {
	if b.cg != nil {
		return "cgroup " + b.cg.Dir()
	}
	return "process group"
}

// members lists the hook's live processes (pgid: its shell's group).
func (b *hookBox) members(pgid int) []member {
	if b.cg == nil {
		return groupMembers(pgid)
	}
	pids, _ := b.cg.Members()
	out := make([]member, 0, len(pids))
	for _, pid := range pids {
		if st, err := procstat.Read(pid); err == nil && st.Live() {
			out = append(out, member{pid: pid, comm: st.Comm})
		}
	}
	return out
}

// kill SIGKILLs every process of the hook.
func (b *hookBox) kill(pgid int) {
	if b.cg != nil && b.cg.Kill() == nil {
		return
	}
	unix.Kill(-pgid, unix.SIGKILL)
}

// close removes the hook's cgroup.
func (b *hookBox) close(log *slog.Logger) {
	if b.cg == nil || b.cg.Remove() {
		return
	}
	if err := b.cg.Close(); err != nil {
		log.Warn("could not remove a hook's cgroup", "err", err)
	}
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

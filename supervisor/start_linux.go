package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
)

// child is a started child process.
type child struct {
	pid   int
	group *jobHold // the job: everything the child started (jobform_linux.go)

	// gate is the write end of the exec gate's pipe while a gated child
	// waits (release: write); takeTTY: it gets the terminal when let go.
	gate    *os.File
	takeTTY bool

	// pidOnly: the lease's liveness is this pid alone (a claim without
	// TTL), so the lease ends with it and its leftovers are killed at once.
	pidOnly bool
	// tether, for an ephemeral lease, keeps the job from outliving
	// leasewrap; nil otherwise.
	tether *tether
}

// signal forwards s to the job: the child's process group (every member,
// when that group is an outer wrapper's).
func (ch *child) signal(s os.Signal) error {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return fmt.Errorf("supervisor: cannot forward %v", s)
	}
	return ch.group.forward(sig)
}

// resolve settles j's command once, before any lease is taken, so a
// command that cannot run costs nothing (Resolve: env(1)'s 127 and 126, a
// file without #! through /bin/sh).
func (j *job) resolve(dir string, env []string) error {
	// The child also gets the key and holder (inherit.Attach): an exec
	// they would make fail (E2BIG) is found here too.
	if env == nil {
		env = os.Environ()
	}
	holder := "" // known before acquiring when the locker says it
	if h, ok := j.locker.(lease.Identity); ok {
		holder = h.Holder()
	}
	env = append(env[:len(env):len(env)], inherit.EnvKey+"="+j.locker.Key(), inherit.EnvHolder+"="+holder)
	path, argv, err := Resolve(j.argv, dir, env)
	if err != nil {
		return err
	}
	j.path, j.argv = path, argv
	return nil
}

// startError classifies a failed exec of path with env(1)'s codes: the
// file changed between Resolve and the exec.
func startError(path string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return &ExecError{Path: path, Code: CodeNotFound, Err: err}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EISDIR),
		errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.ETXTBSY):
		return &ExecError{Path: path, Code: CodeNotExecutable, Err: err}
	}
	return fmt.Errorf("%w %s: %w", ErrStart, path, err)
}

// prepare builds the command for argv with the lease handed over. Like
// tini, the child gets its own process group and, when leasewrap owns the
// terminal (r.foreground), the terminal too (its fd 0), so ^C and job
// control reach it.
func (r *runner) prepare(j *job, h inherit.Handover) *exec.Cmd {
	startLimits()
	c := &r.cfg
	cmd := &exec.Cmd{Path: j.path, Args: j.argv, Dir: c.Dir, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr}
	inherit.Attach(cmd, c.Env, h)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: r.foreground, Ctty: 0}
	if j.hold != nil {
		j.hold.into(cmd)
	}
	return cmd
}

// spawn starts cmd as cmd.Start would (the fields the supervisor sets:
// Path, Args, Dir, Env, the three streams as files or nil for /dev/null,
// ExtraFiles and SysProcAttr, all passed unchanged to the same fork and
// exec in package syscall, on the calling OS thread) and returns the
// child's pid. It does not go through os.StartProcess: that checks once per
// process whether pidfds work by cloning a throwaway child and calling
// pidfd_open, waitid and pidfd_send_signal (0.5 ms, 41 system calls, two
// clones in a run of `true`), for an os.Process handle the supervisor never
// uses: it waits for its child by pid (reap) and signals its process
// group. cmd.Process stays nil.
func spawn(cmd *exec.Cmd) (int, error) {
	if cmd.Process != nil {
		return 0, errors.New("supervisor: child already started")
	}
	env, err := dedupEnv(cmd.Env)
	if err != nil {
		return 0, err
	}
	files := make([]uintptr, 0, 3+len(cmd.ExtraFiles))
	var devNull *os.File
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if s == nil {
			if devNull == nil {
				if devNull, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
					return 0, err
				}
				defer devNull.Close()
			}
			files = append(files, devNull.Fd())
			continue
		}
		f, ok := s.(*os.File)
		if !ok {
			return 0, fmt.Errorf("supervisor: %s: stream %d of the child is not a file (%T)", cmd.Path, i, s)
		}
		files = append(files, f.Fd())
	}
	for _, f := range cmd.ExtraFiles {
		files = append(files, f.Fd())
	}
	pid, _, err := syscall.StartProcess(cmd.Path, cmd.Args, &syscall.ProcAttr{Dir: cmd.Dir, Env: env, Files: files, Sys: cmd.SysProcAttr})
	runtime.KeepAlive(cmd) // its files stay open until the child has them
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	return pid, nil
}

// spawnJob is spawn for a command of the job (not a helper of
// leasewrap's own, such as the job guard): its oom_score_adj is set above
// leasewrap's (oomPlan).
func spawnJob(cmd *exec.Cmd) (int, error) {
	pid, err := spawn(cmd)
	if err == nil {
		oom.started(pid)
	}
	return pid, err
}

// dedupEnv is os/exec's treatment of an environment: the last of several
// entries for one name wins, in place of the first, and a NUL byte is an
// error.
func dedupEnv(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	saw := make(map[string]bool, len(env))
	for n := len(env); n > 0; n-- {
		kv := env[n-1]
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, errors.New("exec: environment variable contains NUL")
		}
		i := strings.IndexByte(kv, '=')
		if i == 0 {
			i = strings.IndexByte(kv[1:], '=') + 1
		}
		if i < 0 {
			if kv != "" {
				out = append(out, kv)
			}
			continue
		}
		if saw[kv[:i]] {
			continue
		}
		saw[kv[:i]] = true
		out = append(out, kv)
	}
	slices.Reverse(out)
	return out, nil
}

// foregroundTTY reports whether f is a terminal whose foreground process
// group is ours (so handing it to the child steals it from nobody).
func foregroundTTY(f *os.File) bool {
	pg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// startPlain starts cmd running at once (unanchored kinds: the lease was
// taken before and is handed over as a descriptor).
func startPlain(cmd *exec.Cmd) (*child, error) {
	pid, err := spawnJob(cmd)
	if err != nil {
		return nil, startError(cmd.Path, err)
	}
	return &child{pid: pid, group: pgroupHold(pid)}, nil
}

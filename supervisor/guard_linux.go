package supervisor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
	"github.com/leasewrap/leasewrap/internal/memtrim"

	"github.com/leasewrap/leasewrap/internal/cgroup"
)

// guardEnv marks a job guard; guardFDEnv names its pipe (what to kill,
// then the all-clear byte 'd'); guardReadyFDEnv, where tasks are limited,
// where it says its threads exist, so a job filling its pids limit cannot
// make it abort.
const (
	guardEnv        = "LEASEWRAP_GUARD"
	guardFDEnv      = "LEASEWRAP_GUARD_FD"
	guardReadyFDEnv = "LEASEWRAP_GUARD_READY_FD"
)

// guard keeps a job whose lease dies with leasewrap (an etcd session) from
// outliving it: leasewrap re-executed, blocked on a pipe only leasewrap
// holds, kills the job if that pipe closes without the all-clear byte.
type guard struct {
	release chan struct{} // closed once the job is over: the thread may go
	pipe    *os.File      // write end of the guard's pipe
	ready   *os.File      // where tasks are limited: the guard's readiness pipe
	pid     int           // the guard process
}

// startGuarded starts cmd with Pdeathsig SIGKILL from a goroutine locked to
// its thread for the job's life (the signal follows the thread,
// golang/go#27505), then tells the guard t what the job is.
func startGuarded(cmd *exec.Cmd, t *guard, hold *jobForm) (*child, error) {
	cmd.SysProcAttr.Pdeathsig = unix.SIGKILL
	type started struct {
		pid int
		err error
	}
	t.awaitReady()
	startc := make(chan started, 1)
	// Not an actor: it only keeps the child's parent thread until the job is over.
	go func() {
		runtime.LockOSThread()
		pid, err := spawnJob(cmd)
		startc <- started{pid, err}
		if err == nil {
			<-t.release
		}
		runtime.UnlockOSThread()
	}()
	st := <-startc
	if st.err != nil {
		t.done() // nothing to guard
		return nil, startError(cmd.Path, st.err)
	}
	ch := &child{pid: st.pid, form: pgroupForm(st.pid), guard: t}
	if hold != nil {
		hold.started(ch)
	}
	ch.form.guardPID = t.pid // leasewrap's child, never a member of a joined job
	if _, err := t.pipe.Write(ch.form.guardMessage()); err != nil {
		ch.form.signal(unix.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(ch.pid, &ws, 0, nil)
		t.done()
		return nil, fmt.Errorf("supervisor: tell the job guard %d what to guard: %w", t.pid, err)
	}
	return ch, nil
}

// startGuard starts a job guard, which waits on its pipe for its job.
func (r *runner) startGuard() (*guard, error) {
	exe, err := r.helperExe("job guard")
	if err != nil {
		return nil, err
	}
	if err := startLimits(); err != nil {
		return nil, err
	}
	t := &guard{release: make(chan struct{})}
	pr, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("supervisor: job guard pipe: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(exe)
	// GOMAXPROCS=1: each P may cost the guard a thread.
	cmd.Env = append(os.Environ(), guardEnv+"=1", guardFDEnv+"=3", "GOMAXPROCS=1")
	cmd.ExtraFiles = []*os.File{pr}
	if limited {
		rr, rw, err := os.Pipe()
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("supervisor: job guard pipe: %w", err)
		}
		defer rw.Close()
		t.ready = rr
		cmd.Env = append(cmd.Env, guardReadyFDEnv+"=4")
		cmd.ExtraFiles = append(cmd.ExtraFiles, rw)
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pid, err := spawn(cmd)
	if err != nil {
		w.Close()
		if t.ready != nil {
			t.ready.Close()
		}
		return nil, fmt.Errorf("supervisor: start the job guard %s: %w", exe, err)
	}
	t.pipe, t.pid = w, pid
	return t, nil
}

// awaitReady waits, where tasks are limited, for the guard's readiness.
func (t *guard) awaitReady() {
	if t.ready != nil {
		awaitByte(t.ready)
		t.ready.Close()
		t.ready = nil
	}
}

// done gives the all-clear and reaps the guard; it is idempotent.
func (t *guard) done() {
	if t.ready != nil { // the job never started
		t.ready.Close()
		t.ready = nil
	}
	t.clear()
	if t.pid > 0 {
		var ws unix.WaitStatus
		eintr.Retry2(func() (int, error) { return unix.Wait4(t.pid, &ws, 0, nil) })
		t.pid = 0
	}
}

// clear gives the all-clear and lets the locked thread go, without reaping.
func (t *guard) clear() {
	if t.pipe != nil {
		t.pipe.Write([]byte{'d'})
		t.pipe.Close()
		t.pipe = nil
	}
	select {
	case <-t.release:
	default:
		close(t.release)
	}
}

// runGuard is the guard role: on the all-clear byte it exits; on the
// pipe's end without it it kills the job's cgroup, then its process group.
func runGuard(fdv string) int {
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE} {
		signal.Ignore(s)
	}
	fd, err := strconv.Atoi(fdv)
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "leasewrap: job guard started wrongly (%s=%q)\n", guardFDEnv, fdv)
		return exitGateBroken
	}
	memtrim.Idle() // it waits for the job's whole life: keep little resident
	if v := os.Getenv(guardReadyFDEnv); v != "" {
		if rfd, err := strconv.Atoi(v); err == nil && rfd > 3 {
			unix.Write(rfd, []byte{'r'})
			unix.Close(rfd)
		}
	}
	pgid, cgdir, clear := readGuardPipe(fd)
	if clear {
		return 0
	}
	if cgdir != "" {
		fmt.Fprintf(os.Stderr, "leasewrap: job guard: leasewrap is gone; killing the job's cgroup %s, its lease will expire\n", cgdir)
		g := cgroup.Open(cgdir)
		if err := g.Kill(); err != nil {
			fmt.Fprintf(os.Stderr, "leasewrap: job guard: %v\n", err)
		} else if empty, _ := g.Wait(5 * time.Second); empty {
			g.Close()
		}
	}
	if pgid <= 1 {
		return 0 // no job named, or a joined job: the outer wrapper's group kill covers it
	}
	fmt.Fprintf(os.Stderr, "leasewrap: job guard: leasewrap is gone; killing the job's process group %d, its lease will expire\n", pgid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if err := unix.Kill(-pgid, unix.SIGKILL); err == unix.ESRCH {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// readGuardPipe reads the job named and whether the all-clear came.
func readGuardPipe(fd int) (pgid int, cgdir string, clear bool) {
	rd := bufio.NewReader(os.NewFile(uintptr(fd), "guard pipe"))
	for {
		c, err := rd.ReadByte()
		if err != nil {
			return pgid, cgdir, false
		}
		switch c {
		case 'd':
			return pgid, cgdir, true
		case 'J':
			line, err := rd.ReadString('\n')
			if err != nil {
				return pgid, cgdir, false
			}
			id, dir, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
			if v, err := strconv.Atoi(id); err == nil {
				pgid, cgdir = v, dir
			}
		default:
			fmt.Fprintf(os.Stderr, "leasewrap: job guard: unexpected %q on its pipe\n", c)
		}
	}
}

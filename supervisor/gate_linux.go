package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
)

// gateEnv names the descriptor an exec gate waits on.
const gateEnv = "LEASEWRAP_GATE_FD"

// Gate turns this process into a helper role (exec gate, job guard) if it
// was started as one, and then never returns. Call it first in main of
// every binary that runs the supervisor.
func Gate() {
	if v, ok := os.LookupEnv(gateEnv); ok {
		os.Exit(runGate(v))
	}
	if _, ok := os.LookupEnv(guardEnv); ok {
		os.Exit(runGuard(os.Getenv(guardFDEnv)))
	}
}

func runGate(v string) int {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 || len(os.Args) < 3 {
		fmt.Fprintf(os.Stderr, "leasewrap: exec gate started wrongly (%s=%q, %d args)\n", gateEnv, v, len(os.Args))
		return exitGateBroken
	}
	defaultSignals()
	var b [1]byte
	eintr.Retry2(func() (int, error) { return unix.Write(fd, []byte{'r'}) }) // ready (awaitGate)
	if n, err := eintr.Retry2(func() (int, error) { return unix.Read(fd, b[:]) }); n != 1 || err != nil {
		// Leasewrap closed the gate or died: the command must never run.
		return exitGateClosed
	}
	unix.Close(fd)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, gateEnv+"=") })
	err = syscall.Exec(os.Args[1], os.Args[2:], env)
	fmt.Fprintf(os.Stderr, "leasewrap: exec %s: %v\n", os.Args[1], err)
	// The file changed since Resolve looked: env(1)'s codes.
	var ee *ExecError
	if errors.As(startError(os.Args[1], err), &ee) {
		return ee.Code
	}
	return CodeNotExecutable
}

// defaultSignals gives the asynchronous signals the dispositions the
// command will have (SIG_DFL unless inherited ignored), so a signal sent to
// the waiting gate does what it would do to the command.
func defaultSignals() {
	for _, s := range []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2,
		unix.SIGALRM, unix.SIGVTALRM, unix.SIGWINCH, unix.SIGPIPE, unix.SIGIO, unix.SIGPWR, unix.SIGXCPU, unix.SIGXFSZ} {
		if signal.Ignored(s) {
			continue
		}
		var act [128]byte
		for _, setsize := range []uintptr{8, 16} { // sizeof(sigset_t): 16 on mips
			_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&act)), 0, setsize, 0, 0)
			if e != unix.EINVAL {
				break
			}
		}
	}
}

const (
	exitGateClosed = 0
	exitGateBroken = 70
)

// startGated starts the exec gate: leasewrap itself, waiting on a socket,
// that execs cmd in place when released, or exits if the socket closes.
func startGated(cmd *exec.Cmd, exe string) (*child, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor: gate socket: %w", err)
	}
	unix.SetNonblock(fds[0], true)
	ours, theirs := os.NewFile(uintptr(fds[0]), "gate"), os.NewFile(uintptr(fds[1]), "gate")
	defer theirs.Close()
	gate := *cmd
	gate.Path = exe
	gate.Args = append([]string{exe, cmd.Path}, cmd.Args...)
	// The gate's descriptor is last; the lease's (if any) keeps fd 3.
	gate.ExtraFiles = append(append([]*os.File(nil), cmd.ExtraFiles...), theirs)
	gate.Env = append(append([]string(nil), cmd.Env...), fmt.Sprintf("%s=%d", gateEnv, 3+len(cmd.ExtraFiles)))
	pid, err := spawnJob(&gate)
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("supervisor: start exec gate %s: %w", exe, err)
	}
	return &child{pid: pid, form: pgroupForm(pid), gate: ours}, nil
}

// readyWait bounds the wait for a helper's readiness byte.
const readyWait = 5 * time.Second

// awaitByte returns once f gives a byte or EOF, or at readyWait; false on EOF.
func awaitByte(f *os.File) bool {
	f.SetReadDeadline(time.Now().Add(readyWait))
	var b [1]byte
	_, err := f.Read(b[:])
	return !errors.Is(err, io.EOF)
}

// awaitGate waits until the gate has set the command's signal dispositions;
// false if it ended first.
func (ch *child) awaitGate() bool {
	return ch.gate == nil || awaitByte(ch.gate)
}

// release lets a gated child run; a gate already gone is reaped as the job.
func (ch *child) release() error {
	if ch.gate == nil {
		return nil
	}
	_, err := ch.gate.Write([]byte{'x'})
	ch.gate.Close()
	ch.gate = nil
	if err != nil && !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		return fmt.Errorf("supervisor: open exec gate of child %d: %w", ch.pid, err)
	}
	return nil
}

// kill ends and reaps a gated child; it returns a signal that ended it first.
func (ch *child) kill() syscall.Signal {
	var ws unix.WaitStatus
	gone, _ := unix.Wait4(ch.pid, &ws, unix.WNOHANG, nil)
	if ch.gate != nil {
		ch.gate.Close() // the gate exits without running the command
		ch.gate = nil
	}
	if gone != ch.pid {
		unix.Kill(ch.pid, unix.SIGKILL)
		eintr.Retry2(func() (int, error) { return unix.Wait4(ch.pid, &ws, 0, nil) })
		if ws.Signaled() && ws.Signal() == unix.SIGKILL {
			return 0 // ours, unless it was already ending of another signal
		}
	}
	if ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

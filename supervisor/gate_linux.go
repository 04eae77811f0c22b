package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
)

// gateEnv names the descriptor an exec gate waits on. It is removed before
// the gate execs the command.
const gateEnv = "LEASEWRAP_GATE_FD"

// Gate turns this process into one of the supervisor's helper roles if it
// was started as one, and never returns in that case: an exec gate
// (os.Args is then [leasewrap, path, argv0, args...]) or a job guard. Call
// it first thing in main of every binary that runs the supervisor (and in
// TestMain of test binaries that act as leasewrap).
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
	var b [1]byte
	if n, err := eintr.Retry2(func() (int, error) { return unix.Read(fd, b[:]) }); n != 1 || err != nil {
		// Leasewrap closed the gate (lease not acquired) or died: the
		// command must never run.
		return exitGateClosed
	}
	unix.Close(fd)
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, gateEnv+"=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(os.Args[1], os.Args[2:], env)
	fmt.Fprintf(os.Stderr, "leasewrap: exec %s: %v\n", os.Args[1], err)
	// The file changed since Resolve looked: env(1)'s codes, which the
	// supervisor reports as the child's status.
	var ee *ExecError
	if errors.As(startError(os.Args[1], err), &ee) {
		return ee.Code
	}
	return CodeNotExecutable
}

const (
	exitGateClosed = 0
	exitGateBroken = 70
)

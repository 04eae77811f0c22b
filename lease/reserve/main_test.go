package reserve

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

// helperEnv switches the test binary into a helper process (see TestMain);
// cross-process races and crashes run across real processes.
const helperEnv = "RESERVE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "race":
		os.Exit(helperRace())
	case "hold":
		os.Exit(helperHold())
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperDeadline ends a helper that was forgotten by its test.
func helperDeadline() { time.AfterFunc(60*time.Second, func() { os.Exit(3) }) }

// helperRace reserves RESERVE_KEY for RESERVE_RUN after a barrier: it
// prints "ready", waits for stdin to close, reserves, and prints
// "reserved <id>" or "already <id>".
func helperRace() int {
	helperDeadline()
	s := NewStore(os.Getenv("RESERVE_HOME"))
	pid, _ := strconv.Atoi(os.Getenv("RESERVE_PID"))
	run := os.Getenv("RESERVE_RUN")
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // the barrier: the parent closes stdin
	existing, err := s.Reserve(context.Background(), Key{Key: os.Getenv("RESERVE_KEY")}, testRecord(run, uint32(pid)))
	switch {
	case err != nil:
		fmt.Println("error", err)
		return 1
	case existing == nil:
		fmt.Println("reserved", run)
	default:
		fmt.Println("already", existing.RunID)
	}
	return 0
}

// helperHold acquires the reservation RESERVE_KEY through a Locker, starts
// a grandchild (sleep) that inherits the materializer lease when
// RESERVE_GRANDCHILD=1, prints "held <run id> <grandchild pid>" and waits
// for stdin to close (or to be killed); on EOF it finishes with exit
// RESERVE_EXIT.
func helperHold() int {
	helperDeadline()
	l, err := NewLocker(LockerConfig{Key: os.Getenv("RESERVE_KEY"), Home: os.Getenv("RESERVE_HOME"), Host: "test"})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ls, err := l.Acquire(context.Background())
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	gpid := 0
	if os.Getenv("RESERVE_GRANDCHILD") == "1" {
		c := exec.Command("sleep", "60")
		c.ExtraFiles = []*os.File{ls.(lease.FileHolder).File()}
		if err := c.Start(); err != nil {
			fmt.Println("error", err)
			return 1
		}
		gpid = c.Process.Pid
	}
	fmt.Println("held", ls.Holder(), gpid)
	io.Copy(io.Discard, os.Stdin)
	code, _ := strconv.Atoi(os.Getenv("RESERVE_EXIT"))
	now := time.Now()
	if err := ls.Finish(context.Background(), leaseResult(code, now)); err != nil {
		fmt.Println("error", err)
		return 1
	}
	return 0
}

// startHelper starts the test binary as helper kind with env; it talks
// over its stdin and stdout.
func startHelper(t *testing.T, kind string, env ...string) *testutil.Proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+kind), env...)
	cmd.Stderr = os.Stderr
	return testutil.StartPiped(t, cmd)
}

// helperWait bounds every wait of a test on a helper's output or exit.
const helperWait = 30 * time.Second

package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/lease"
)

// asMainEnv makes the test binary a minimal leasewrap: it supervises the
// command in os.Args[1:] under a fileKind configured from the environment
// and exits as the exit-code contract says.
const asMainEnv = "SUPERVISOR_TEST_MAIN"

func TestMain(m *testing.M) {
	Gate()
	if os.Getenv("T_CHILD_REPORT") == "1" && os.Getenv("LEASEWRAP_KIND") != "" {
		// Started by the supervisor under test: report what it handed over.
		fmt.Printf("kind=%s key=%s fd=%s extra=%s gate=%s\n", os.Getenv("LEASEWRAP_KIND"), os.Getenv("LEASEWRAP_KEY"),
			os.Getenv("LEASEWRAP_FD"), os.Getenv("LEASEWRAP_TEST_EXTRA"), os.Getenv(gateEnv))
		for _, fd := range inheritedFDs(0) {
			fmt.Println("fd", fd)
		}
		os.Exit(0)
	}
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(testMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name))
	return d
}

func testMain(argv []string) int {
	k := &fileKind{dir: os.Getenv("T_DIR"), key: os.Getenv("T_KEY"), holder: os.Getenv("T_HOLDER"),
		anchored: os.Getenv("T_ANCHORED") == "1", ttl: envDuration("T_TTL"),
		blockRenew: os.Getenv("T_BLOCK_RENEW") == "1", blockFinish: os.Getenv("T_BLOCK_FINISH") == "1",
		ephemeral: os.Getenv("T_EPHEMERAL") == "1", expire: os.Getenv("T_EXPIRE") == "1"}
	grace := 10 * time.Second // the command line's default
	if v, ok := os.LookupEnv("T_GRACE"); ok {
		grace, _ = time.ParseDuration(v)
	}
	var other *exec.Cmd
	if os.Getenv("T_OTHER_CHILD") == "1" {
		// A program embedding the supervisor has a child of its own.
		other = exec.Command("sh", "-c", "exit 7")
		if err := other.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "other child:", err)
			return 70
		}
		time.Sleep(50 * time.Millisecond)
	}
	var l lease.Locker = k
	if k.anchored {
		l = anchoredKind{k}
	}
	cfg := Config{
		Locker:        l,
		Argv:          argv,
		Wait:          envDuration("T_WAIT"),
		KillGrace:     grace,
		RenewPeriod:   envDuration("T_PERIOD"),
		FinishTimeout: envDuration("T_FINISH_TIMEOUT"),
		Subreaper:     os.Getenv("T_SUBREAPER") == "1",
		LeaveStrays:   os.Getenv("T_LEAVE_STRAYS") == "1",
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
		ExitAfter:     os.Getenv("T_EXIT_AFTER") == "1",
		Job:           JobMode(os.Getenv("T_JOB")),
		Timeout:       envDuration("T_TIMEOUT"),
	}
	if v := os.Getenv("T_STOP_SIGNAL"); v != "" {
		n, _ := strconv.Atoi(v)
		cfg.StopSignal = syscall.Signal(n)
	}
	if dir, ok := os.LookupEnv("T_CGROUP_PARENT"); ok {
		cfg.cgroupParent = func() (string, error) { return dir, nil }
	}
	if os.Getenv("T_CGROUP_UNDELEGATED") == "1" {
		// Our real cgroup, as if it were an undelegated systemd unit's.
		cfg.cgroupParent = func() (string, error) {
			dir, err := cgroup.Parent()
			if err != nil {
				return "", err
			}
			return dir, fmt.Errorf("%w: %w: %s (test)", cgroup.ErrUnavailable, cgroup.ErrUndelegated, dir)
		}
	}
	if os.Getenv("T_DEBUG") == "1" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if os.Getenv("T_EVENTS") == "1" {
		cfg.OnEvent = func(e Event) {
			fmt.Fprintf(os.Stderr, "event %v pid=%d holder=%s err=%v\n", e.Type, e.PID, e.Holder, e.Err)
		}
	}
	res, err := Run(context.Background(), cfg)
	if os.Getenv("T_SIGNAL_SELF_AFTER") == "1" {
		// Whether Run left its handlers: SIGTERM's default action in a Go program ends
		// this process; a handler still installed swallows it.
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(100 * time.Millisecond)
		fmt.Fprintln(os.Stderr, "survived SIGTERM after Run")
	}
	if other != nil {
		other.Wait()
		fmt.Fprintf(os.Stderr, "other child status: %d\n", other.ProcessState.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 70
	}
	fmt.Fprintf(os.Stderr, "outcome: %v: %v\n", res.Outcome, res.Cause)
	switch res.Outcome {
	case Ran, Replayed, PreStepFailed:
		return res.ExitCode
	case Aborted:
		return 128 + int(res.Signal)
	case Conflict:
		return 75
	case Lost:
		return 76
	case TimedOut:
		return 124
	}
	return 70
}

// env builds the test-main environment for one supervised run.
func testEnv(dir string, kv ...string) []string {
	env := append(os.Environ(), asMainEnv+"=1", "T_DIR="+dir, "T_KEY=job", "T_HOLDER=h-"+fmt.Sprint(time.Now().UnixNano()))
	return append(env, kv...)
}

func contains(t *testing.T, have, want string) {
	t.Helper()
	if !strings.Contains(have, want) {
		t.Fatalf("want %q in:\n%s", want, have)
	}
}

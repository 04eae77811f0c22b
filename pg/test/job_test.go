package test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// The test job is this test binary started by a wrapper with these
// variables (not LEASEWRAP_PG_*: the wrapper keeps that prefix for itself). It logs "start MONO FENCE PID PPID" and "end MONO FENCE" to the
// history (monotonic ns, one O_APPEND write each, so lines from many
// processes never interleave).
const (
	envJob      = "LWPGTEST_JOB"       // history file
	envJobSleep = "LWPGTEST_JOB_SLEEP" // how long the job runs
	// envJobStubborn makes the job ignore SIGTERM: only SIGKILL ends it.
	envJobStubborn = "LWPGTEST_JOB_STUBBORN"
	// envJobCounter is a DSN: the job adds one to table counter in one
	// UPDATE guarded by its fence, and logs "inc N FENCE" or "stale FENCE".
	envJobCounter = "LWPGTEST_JOB_COUNTER"
)

func jobMain() {
	path := os.Getenv(envJob)
	if path == "" {
		if os.Getenv("LEASEWRAP_FENCE") != "" {
			// A wrapper's child without a history: never run the tests.
			fmt.Fprintf(os.Stderr, "test job started without %s\n", envJob)
			os.Exit(92)
		}
		return
	}
	fence := os.Getenv("LEASEWRAP_FENCE")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(90)
	}
	logf := func(format string, a ...any) { f.WriteString(fmt.Sprintf(format, a...) + "\n") }
	if fence == "" {
		logf("nofence %d %d", monoNow(), os.Getpid())
		os.Exit(92)
	}
	term := make(chan os.Signal, 1)
	if os.Getenv(envJobStubborn) != "" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	logf("start %d %s %d %d", monoNow(), fence, os.Getpid(), os.Getppid())
	code := 0
	if dsn := os.Getenv(envJobCounter); dsn != "" {
		if err := increment(dsn, fence, logf); err != nil {
			logf("incerr %s %q", fence, err.Error())
			code = 91
		}
	}
	sleep, _ := time.ParseDuration(os.Getenv(envJobSleep))
	select {
	case <-time.After(sleep):
	case <-term:
		code = 143
	}
	logf("end %d %s", monoNow(), fence)
	os.Exit(code)
}

// increment adds one to the counter in one statement that a fence lower
// than the last writer's cannot pass: the fence recipe a job uses.
func increment(dsn, fence string, logf func(string, ...any)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var n int64
	err = conn.QueryRow(ctx, "update counter set n = n + 1, fence = $1::numeric where id = 1 and fence < $1::numeric returning n", fence).Scan(&n)
	if err == pgx.ErrNoRows {
		logf("stale %s", fence)
		return nil
	}
	if err != nil {
		return err
	}
	logf("inc %d %s", n, fence)
	return nil
}

// monoNow is CLOCK_MONOTONIC in ns, comparable across processes.
func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// The test job: started by leasewrap-etcd as its child (the test binary
// re-executed with envJob set to a log file; not a LEASEWRAP_ name, which
// the supervisor strips from the child's environment). It appends one line per event
// to the log, stamped with CLOCK_MONOTONIC (shared by every process on the
// host):
//
//	start MONO FENCE PID PPID
//	inc VALUE FENCE    a fenced increment of the counter succeeded
//	stale FENCE        the guard refused it (the lock is no longer ours)
//	end MONO FENCE     on its own end or on SIGTERM
const (
	envJob        = "ETCDTEST_JOB"
	envJobSleep   = "ETCDTEST_JOB_SLEEP"   // how long the job works
	envJobCounter = "ETCDTEST_JOB_COUNTER" // the counter key, if any
)

func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func jobMain() {
	logPath := os.Getenv(envJob)
	if logPath == "" || os.Getenv("LEASEWRAP_FENCE") == "" {
		return // not a wrapper's child
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(90)
	}
	fence := os.Getenv("LEASEWRAP_FENCE")
	logf := func(format string, a ...any) { f.WriteString(fmt.Sprintf(format, a...) + "\n") } // one write: atomic with O_APPEND
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	logf("start %d %s %d %d", monoNow(), fence, os.Getpid(), os.Getppid())
	sleep, _ := time.ParseDuration(os.Getenv(envJobSleep))
	end := time.After(sleep)
	code := 0
	if key := os.Getenv(envJobCounter); key != "" {
		if err := increment(key, fence, logf); err != nil {
			code = 91
		}
	}
	select {
	case <-end:
	case <-term:
		code = 143
	}
	logf("end %d %s", monoNow(), fence)
	os.Exit(code)
}

// increment adds one to the counter in a transaction guarded by the lock
// key's create revision (the fencing token) and the counter's own mod
// revision.
func increment(key, fence string, logf func(string, ...any)) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(os.Getenv("LEASEWRAP_ETCD_ENDPOINTS"), ","), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	fv, _ := strconv.ParseInt(fence, 10, 64)
	lockKey := os.Getenv("ETCD_LOCK_KEY")
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		g, err := cli.Get(ctx, key)
		if err != nil {
			cancel()
			return err
		}
		var n, mod int64
		if len(g.Kvs) > 0 {
			n, _ = strconv.ParseInt(string(g.Kvs[0].Value), 10, 64)
			mod = g.Kvs[0].ModRevision
		}
		r, err := cli.Txn(ctx).If(
			clientv3.Compare(clientv3.CreateRevision(lockKey), "=", fv),
			clientv3.Compare(clientv3.ModRevision(key), "=", mod),
		).Then(clientv3.OpPut(key, strconv.FormatInt(n+1, 10))).
			Else(clientv3.OpGet(lockKey)).Commit()
		cancel()
		if err != nil {
			return err
		}
		if r.Succeeded {
			logf("inc %d %s", n+1, fence)
			return nil
		}
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) == 0 || kvs[0].CreateRevision != fv {
			logf("stale %s", fence)
			return nil
		}
		// The counter moved (another writer): read again.
	}
	return fmt.Errorf("counter contended 20 times")
}

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// lineWrapper is a leasewrap-etcd whose output is read line by line as it
// comes, so a test can act at a logged moment.
type lineWrapper struct {
	*testutil.Group
	out   *testutil.Lines
	lines chan string
}

func startLines(t *testing.T, args ...string) *lineWrapper {
	t.Helper()
	w := &lineWrapper{lines: make(chan string, 256)}
	w.out = testutil.NewLines(func(l string) {
		select {
		case w.lines <- l:
		default:
		}
	})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envMain+"=1", "LEASEWRAP_LOG_FORMAT=text")
	cmd.Stdout, cmd.Stderr = w.out, w.out
	w.Group = testutil.StartGroup(t, cmd)
	return w
}

// waitLine waits (at most d) for a line containing s.
func (w *lineWrapper) waitLine(t *testing.T, s string, d time.Duration) {
	t.Helper()
	d = testutil.Scale(d)
	timeout := time.After(d)
	for {
		select {
		case l := <-w.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-w.Done():
			t.Fatalf("ended before logging %q:\n%s", s, w.output())
		case <-timeout:
			t.Fatalf("no %q within %v:\n%s", s, d, w.output())
		}
	}
}

func (w *lineWrapper) output() string { return w.out.String() }

// TestPhasesBeforeTheJobAreBounded (issue 17): every phase before the job
// runs is bounded by --dial-timeout and --wait, and a job never starts
// with less than one renewal period left before its fence. The server is
// paused (SIGSTOP) at the moment the wrapper logs that etcd answered the
// dial's probe: the connection stays up but nothing answers, as with a
// connection that died after the probe. The bounds asserted are the
// configured ones plus 2 s of slack (stretched by testutil.Scale) for a
// loaded machine, not speed targets.
func TestPhasesBeforeTheJobAreBounded(t *testing.T) {
	slack := testutil.Scale(2 * time.Second)
	t.Run("try-once-after-the-probe", func(t *testing.T) {
		c := etcdtest.Start(t, etcdtest.Options{})
		m := c.Members[0]
		ran := tmp(t, "ran")
		w := startLines(t, lockArgs("bounded", c.Endpoints(), []string{"--dial-timeout", "1s", "--log-level", "debug"}, "sh", "-c", "echo ran > "+ran)...)
		w.waitLine(t, "etcd answered the dial's probe", 20*time.Second)
		m.Stop()
		paused := time.Now()
		defer m.Cont()
		select {
		case <-w.Done():
		case <-time.After(testutil.Scale(60 * time.Second)):
			t.Fatalf("still running long after the pause:\n%s", w.output())
		}
		took := w.Ended().Sub(paused)
		t.Logf("RESULT try-once, server paused after the probe | exit %d after %v | %s", w.Code(), took.Round(10*time.Millisecond), lastLineOf(w.output()))
		if _, err := os.Stat(ran); err == nil {
			t.Fatal("the job ran")
		}
		// Bound: the attempt (dial timeout) plus its clean-up (dial timeout).
		if w.Code() != 69 || took > 2*time.Second+slack {
			t.Fatalf("want 69 within 2 × --dial-timeout (+%v slack), have %d after %v:\n%s", slack, w.Code(), took, w.output())
		}
	})
	t.Run("wait-with-a-paused-server", func(t *testing.T) {
		c := etcdtest.Start(t, etcdtest.Options{})
		m := c.Members[0]
		holder := startLW(t, nil, lockArgs("bounded-wait", c.Endpoints(), nil, "sleep", "60")...)
		waitKeys(t, c.Client(t), "bounded-wait/", 1)
		w := startLines(t, lockArgs("bounded-wait", c.Endpoints(), []string{"--wait", "4s", "--dial-timeout", "1s"}, "true")...)
		waitKeys(t, c.Client(t), "bounded-wait/", 2)
		m.Stop()
		defer m.Cont()
		began := time.Now()
		select {
		case <-w.Done():
		case <-time.After(testutil.Scale(60 * time.Second)):
			t.Fatalf("still running long after the pause:\n%s", w.output())
		}
		took := w.Ended().Sub(began)
		t.Logf("RESULT --wait 4s, server paused while queued | exit %d after %v | %s", w.Code(), took.Round(10*time.Millisecond), lastLineOf(w.output()))
		if w.Code() != 75 && w.Code() != 69 || took > 4*time.Second+time.Second+slack {
			t.Fatalf("want 75 or 69 within --wait + --dial-timeout (+%v slack), have %d after %v:\n%s", slack, w.Code(), took, w.output())
		}
		_ = holder // killed at cleanup
	})
	t.Run("grant-delayed-past-the-fence", func(t *testing.T) {
		c := etcdtest.Start(t, etcdtest.Options{})
		m := c.Members[0]
		ran := tmp(t, "ran")
		// Fence 2 s after the attempt began (TTL 4 s - grace 1 s - margin
		// 1 s); the server answers the grant 3 s late; the dial timeout
		// allows it.
		w := startLines(t, lockArgs("late", c.Endpoints(), append([]string{"--dial-timeout", "10s", "--log-level", "debug"}, fast...), "sh", "-c", "echo ran > "+ran)...)
		w.waitLine(t, "etcd answered the dial's probe", 20*time.Second)
		m.Stop()
		time.Sleep(3 * time.Second)
		m.Cont()
		select {
		case <-w.Done():
		case <-time.After(testutil.Scale(60 * time.Second)):
			t.Fatalf("still running:\n%s", w.output())
		}
		_, statErr := os.Stat(ran)
		t.Logf("RESULT grant 3 s late, fence 2 s after the attempt | exit %d | ran %v | %s", w.Code(), statErr == nil, lastLineOf(w.output()))
		if w.Code() != 75 || statErr == nil || !strings.Contains(w.output(), "renewal period") {
			t.Fatalf("want 75 (released, not run: less than a renewal period left before the fence), have %d, ran %v:\n%s", w.Code(), statErr == nil, w.output())
		}
		if n := countKeys(t, c.Client(t), "late/"); n != 0 {
			t.Fatalf("the lock was left held: %d keys", n)
		}
	})
}

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// flockN runs flock(1) without waiting (-n) on path with mode ("-x" or
// "-s") and reports whether it got the lock: the real peer's view.
func flockN(t *testing.T, mode, path string) bool {
	t.Helper()
	err := exec.Command("flock", mode, "-n", path, "true").Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false
	}
	t.Fatalf("flock %s -n %s: %v", mode, path, err)
	return false
}

// startFlock1 starts flock(1) holding path (mode "-x" or "-s") until gone
// exists; it returns once flock(1)'s command runs.
func startFlock1(t *testing.T, mode, path, ready, gone string) *testutil.Proc {
	t.Helper()
	p := testutil.Start(t, exec.Command("flock", mode, path, "sh", "-c", holdUntil(ready, gone)))
	t.Cleanup(func() { // before the kill of flock(1) alone, which would orphan its command
		os.WriteFile(gone, nil, 0o644)
		select {
		case <-p.Done():
		case <-time.After(10 * time.Second):
		}
	})
	waitFor(t, "flock(1)'s command", func() bool { return exists(ready) })
	return p
}

func needFlock1(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("flock")
	testutil.Need(t, "flock(1) (util-linux)", err)
}

// TestFlockRunExcludesFlock1 runs flock(1) as the peer in both
// directions: while leasewrap holds PATH, `flock -n PATH` fails; while
// flock(1) holds it, leasewrap exits 75 (or --conflict-exit-code) without
// running the command, or waits with --wait and runs after the release.
func TestFlockRunExcludesFlock1(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "job.lock")

	t.Run("leasewrap holds", func(t *testing.T) {
		ready, gone := filepath.Join(dir, "lw.ready"), filepath.Join(dir, "lw.gone")
		p := startLW(t, nil, "flock", "run", lock, "--", "sh", "-c", holdUntil(ready, gone))
		waitFor(t, "leasewrap's command", func() bool { return exists(ready) })
		if flockN(t, "-x", lock) {
			t.Fatal("flock -n got the lock while leasewrap's command held it")
		}
		if flockN(t, "-s", lock) {
			t.Fatal("flock -s -n got the lock while leasewrap held it exclusively")
		}
		os.WriteFile(gone, nil, 0o644)
		if have := p.wait(t); have != 0 {
			t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
		}
		if !flockN(t, "-x", lock) {
			t.Fatal("the lock is still held after leasewrap and its command exited")
		}
	})

	t.Run("flock(1) holds", func(t *testing.T) {
		ready, gone := filepath.Join(dir, "f.ready"), filepath.Join(dir, "f.gone")
		holder := startFlock1(t, "-x", lock, ready, gone)
		ran := filepath.Join(dir, "ran")
		for _, tc := range []struct {
			flags []string
			want  int
		}{{nil, 75}, {[]string{"--conflict-exit-code", "0"}, 0}, {[]string{"--conflict-exit-code", "9"}, 9}} {
			args := append(append([]string{"flock", "run", lock}, tc.flags...), "--", "touch", ran)
			have, p := runLW(t, nil, args...)
			if have != tc.want {
				t.Fatalf("%v: want %d, have %d\n%s", tc.flags, tc.want, have, &p.stderr)
			}
			if exists(ran) {
				t.Fatalf("%v: the command ran while flock(1) held the lock", tc.flags)
			}
			if !strings.Contains(p.stderr.String(), lock) || !strings.Contains(p.stderr.String(), "is held") {
				t.Fatalf("%v: want the conflict to name %s, have:\n%s", tc.flags, lock, &p.stderr)
			}
		}
		waiter := startLW(t, nil, "flock", "run", lock, "--wait", "30s", "--", "touch", ran)
		waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
		if exists(ran) {
			t.Fatal("the waiter ran its command while flock(1) held the lock")
		}
		os.WriteFile(gone, nil, 0o644)
		<-holder.Done()
		if have := waiter.wait(t); have != 0 {
			t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
		}
		if !exists(ran) {
			t.Fatal("the waiter exited 0 without running its command")
		}
	})

	t.Run("wait runs out", func(t *testing.T) {
		ready, gone := filepath.Join(dir, "w.ready"), filepath.Join(dir, "w.gone")
		startFlock1(t, "-x", lock, ready, gone)
		have, p := runLW(t, nil, "flock", "run", lock, "--wait", "300ms", "--", "true")
		if have != 75 {
			t.Fatalf("want 75 after the wait, have %d\n%s", have, &p.stderr)
		}
	})
}

// TestFlockRunSharedMode: -s takes LOCK_SH, which flock(1) -s shares and
// flock(1) -x (or an exclusive leasewrap) is refused.
func TestFlockRunSharedMode(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "shared.lock")
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	p := startLW(t, nil, "flock", "run", lock, "-s", "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "leasewrap's command", func() bool { return exists(ready) })
	if !flockN(t, "-s", lock) {
		t.Fatal("flock -s -n was refused while leasewrap held a shared lock")
	}
	if flockN(t, "-x", lock) {
		t.Fatal("flock -x -n got the lock while leasewrap held it shared")
	}
	if have, q := runLW(t, nil, "flock", "run", lock, "--shared", "--", "true"); have != 0 {
		t.Fatalf("a second shared leasewrap: want 0, have %d\n%s", have, &q.stderr)
	}
	if have, q := runLW(t, nil, "flock", "run", lock, "--", "true"); have != 75 {
		t.Fatalf("an exclusive leasewrap: want 75, have %d\n%s", have, &q.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	if have := p.wait(t); have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
	}

	// flock(1) holding it shared: a shared leasewrap runs, an exclusive one does not.
	ready2, gone2 := filepath.Join(dir, "ready2"), filepath.Join(dir, "gone2")
	startFlock1(t, "-s", lock, ready2, gone2)
	if have, q := runLW(t, nil, "flock", "run", lock, "-s", "--", "true"); have != 0 {
		t.Fatalf("shared under flock -s: want 0, have %d\n%s", have, &q.stderr)
	}
	if have, q := runLW(t, nil, "flock", "run", lock, "--", "true"); have != 75 {
		t.Fatalf("exclusive under flock -s: want 75, have %d\n%s", have, &q.stderr)
	}
}

// TestFlockRunSIGKILLLeavesTheLockWithTheJob: the job inherits the locked
// descriptor, so leasewrap's death by SIGKILL does not free the lock; it
// is freed when the job exits.
func TestFlockRunSIGKILLLeavesTheLockWithTheJob(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "job.lock")
	pidFile, gone := filepath.Join(dir, "pid"), filepath.Join(dir, "gone")
	p := startLW(t, nil, "flock", "run", lock, "--", "sh", "-c", pidThenHoldUntil(pidFile, gone))
	job := testutil.ReadPID(t, pidFile, 10e9)
	p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done()
	if !alive(job) {
		t.Fatal("the job died with leasewrap")
	}
	if flockN(t, "-x", lock) {
		t.Fatal("flock -n got the lock after leasewrap was SIGKILLed while its job still ran")
	}
	have, q := runLW(t, nil, "flock", "run", lock, "--", "true")
	if have != 75 || !strings.Contains(q.stderr.String(), "taken by a process that has exited") {
		t.Fatalf("want 75 saying the taker exited and its job holds the lock, have %d:\n%s", have, &q.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	waitFor(t, "the job to exit", func() bool { return !alive(job) })
	waitFor(t, "the lock to be free", func() bool { return flockN(t, "-x", lock) })
}

// TestFlockRunEnvironment: the job sees LEASEWRAP_KIND=flock, the absolute
// path as LEASEWRAP_KEY, the holder, and the locked descriptor as
// LEASEWRAP_FD (inherited, FD_CLOEXEC clear); a relative PATH is made
// absolute and created with mode 0666 minus the umask, as flock(1) does.
func TestFlockRunEnvironment(t *testing.T) {
	dir := t.TempDir()
	cmd := leasewrapCmd(t, "flock", "run", "rel.lock", "--holder", "me", "--", os.Args[0])
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "CHILD_REPORT=1")
	old := syscall.Umask(0o027)
	out, err := cmd.Output()
	syscall.Umask(old)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"LEASEWRAP_KIND=flock", "LEASEWRAP_KEY=" + filepath.Join(dir, "rel.lock"), "LEASEWRAP_HOLDER=me", "LEASEWRAP_FD=3", "fd 3"} {
		if !strings.Contains(string(out), want+"\n") {
			t.Fatalf("want %q in the child's report, have:\n%s", want, out)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "rel.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if have := fi.Mode().Perm(); have != 0o640 {
		t.Fatalf("want mode 0640 (0666 minus umask 027), have %o", have)
	}
}

// TestFlockRunRefusesWhatItMustNotLock: a planted symlink, FIFO or hard
// link is refused (65) without locking or creating anything through it;
// a directory and a missing directory are usage (64); every message names
// the path.
func TestFlockRunRefusesWhatItMustNotLock(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.lock")
	os.Symlink(filepath.Join(dir, "not-yet"), sym) // dangling: would be created through
	sym2 := filepath.Join(dir, "sym2.lock")
	os.Symlink(target, sym2)
	fifo := filepath.Join(dir, "fifo.lock")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.lock")
	if err := os.Link(target, hard); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	ran := filepath.Join(dir, "ran")
	for _, tc := range []struct {
		name, path string
		want       int
		text       string
	}{
		{"dangling symlink", sym, 65, "symlink"},
		{"symlink to a file", sym2, 65, "symlink"},
		{"fifo", fifo, 65, "named pipe"},
		{"hard link", hard, 65, "hard links"},
		{"directory", sub, 64, "is a directory"},
		{"missing directory", filepath.Join(dir, "no", "such", "x.lock"), 64, filepath.Join(dir, "no", "such")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have, p := runLW(t, nil, "flock", "run", tc.path, "--", "touch", ran)
			if have != tc.want {
				t.Fatalf("want %d, have %d\n%s", tc.want, have, &p.stderr)
			}
			if !strings.Contains(p.stderr.String(), tc.path) || !strings.Contains(p.stderr.String(), tc.text) {
				t.Fatalf("want the message to name %s and say %q, have:\n%s", tc.path, tc.text, &p.stderr)
			}
			if exists(ran) {
				t.Fatal("the command ran")
			}
		})
	}
	if exists(filepath.Join(dir, "not-yet")) {
		t.Fatal("a file was created through the dangling symlink")
	}
}

// TestFlockRunJob: what every run verb does holds for the flock kind: a
// SIGTERM to leasewrap reaches the job, death by signal N is 128+N, and
// a straggler that inherited the locked descriptor is stopped before
// leasewrap exits, so the lock is free afterwards.
func TestFlockRunJob(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "job.lock")

	ready := filepath.Join(dir, "ready")
	p := startLW(t, nil, "flock", "run", lock, "--", "sh", "-c", "trap 'exit 7' TERM; touch "+ready+"; "+waitUntil(filepath.Join(dir, "never")))
	waitFor(t, "the job", func() bool { return exists(ready) })
	p.Cmd.Process.Signal(syscall.SIGTERM)
	if have := p.wait(t); have != 7 {
		t.Fatalf("SIGTERM forwarded: want the job's 7, have %d\n%s", have, &p.stderr)
	}

	if have, q := runLW(t, nil, "flock", "run", lock, "--", "sh", "-c", "kill -KILL $$"); have != 128+9 {
		t.Fatalf("job killed by SIGKILL: want 137, have %d\n%s", have, &q.stderr)
	}

	have, q := runLW(t, nil, "flock", "run", lock, "--kill-grace", "2s", "--", "sh", "-c", "sleep 30 & exit 3")
	if have != 3 {
		t.Fatalf("job with a straggler: want the job's 3, have %d\n%s", have, &q.stderr)
	}
	if !flockN(t, "-x", lock) {
		t.Fatal("the lock is still held after leasewrap exited: its straggler was left running with the descriptor")
	}
	if !strings.Contains(q.stderr.String(), "still running") {
		t.Fatalf("want the straggler named, have:\n%s", &q.stderr)
	}
}

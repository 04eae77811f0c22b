package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

func TestFindMount(t *testing.T) {
	for _, tc := range []struct {
		name, mi, mnt, root string
	}{
		{"hybrid", "30 24 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n" +
			"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:7 - cgroup2 cgroup2 rw\n" +
			"42 31 0:39 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", "/sys/fs/cgroup/unified", "/"},
		{"pure v2", "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", "/sys/fs/cgroup", "/"},
		{"container without cgroupns", "500 400 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup rw\n", "/sys/fs/cgroup", "/docker/abc"},
		{"escaped", `7 1 0:26 / /mnt/my\040cg rw - cgroup2 none rw` + "\n", "/mnt/my cg", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mnt, root, err := findMount([]byte(tc.mi))
			if err != nil || mnt != tc.mnt || root != tc.root {
				t.Fatalf("want %q %q, have %q %q %v", tc.mnt, tc.root, mnt, root, err)
			}
		})
	}
	if _, _, err := findMount([]byte("42 31 0:39 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("v1 only: want ErrUnavailable, have %v", err)
	}
}

func TestSelfPathAndPlace(t *testing.T) {
	p, err := selfPath([]byte("9:name=systemd:/\n4:memory:/x\n0::/system.slice/a.service\n"))
	if err != nil || p != "/system.slice/a.service" {
		t.Fatalf("want /system.slice/a.service, have %q %v", p, err)
	}
	if _, err := selfPath([]byte("4:memory:/x\n")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("no 0:: line: want ErrUnavailable, have %v", err)
	}
	if _, err := selfPath([]byte("0::/gone (deleted)\n")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("deleted: want ErrUnavailable, have %v", err)
	}
	for _, tc := range []struct{ mnt, root, p, dir string }{
		{"/sys/fs/cgroup", "/", "/", "/sys/fs/cgroup"},
		{"/sys/fs/cgroup/unified", "/", "/a/b", "/sys/fs/cgroup/unified/a/b"},
		{"/sys/fs/cgroup", "/docker/abc", "/docker/abc", "/sys/fs/cgroup"},
		{"/sys/fs/cgroup", "/docker/abc", "/docker/abc/sub", "/sys/fs/cgroup/sub"},
	} {
		pl, err := place(tc.mnt, tc.root, tc.p)
		if err != nil || pl.Dir != tc.dir {
			t.Fatalf("place(%q, %q, %q): want %q, have %q %v", tc.mnt, tc.root, tc.p, tc.dir, pl.Dir, err)
		}
	}
	if _, err := place("/sys/fs/cgroup", "/docker/abc", "/other"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("outside the mount: want ErrUnavailable, have %v", err)
	}
}

// realParent returns where this test may create cgroups; it skips where
// the system offers none, except under CI (root on a cgroup v2 host).
func realParent(t *testing.T) string {
	t.Helper()
	dir, err := Parent()
	needCgroup(t, err)
	return dir
}

// needCgroup skips the test where err says the system offers no cgroup v2
// to work in, except under CI (root on a cgroup v2 host), where it fails.
// (internal/testutil.Need does the same; it is not importable here.)
func needCgroup(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI must offer a cgroup v2 directory: %v", err)
	}
	t.Skip(err)
}

// started is a process started in a cgroup; done is closed once it has
// been waited for (read nothing of cmd's state before that).
type started struct {
	*exec.Cmd
	done chan struct{}
}

// startIn starts argv born inside g (CLONE_INTO_CGROUP).
func startIn(t *testing.T, g *Group, argv ...string) started {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: g.FD()}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q in %s: %v", argv, g.Dir(), err)
	}
	s := started{Cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return s
}

// A setsid'd, TERM-ignoring grandchild stays a member; Kill ends it; Wait
// sees the cgroup empty; Close removes the directory.
func TestGroupHoldsWhatLeavesTheProcessGroup(t *testing.T) {
	g, err := Create(realParent(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Kill(); g.Close() })
	if !strings.HasPrefix(filepath.Base(g.Dir()), fmt.Sprintf("%s%d-", Prefix, os.Getpid())) {
		t.Fatalf("want a name leasewrap-<pid>-<rand>, have %s", g.Dir())
	}
	pidf := filepath.Join(t.TempDir(), "pid")
	cmd := startIn(t, g, "sh", "-c", fmt.Sprintf(`setsid sh -c 'trap "" TERM; echo $$ > %s; exec sleep 30' & exit 0`, pidf))
	esc, _ := strconv.Atoi(testutil.WaitFile(t, pidf, 10*time.Second))
	select { // the shell exits at once
	case <-cmd.done:
	case <-time.After(testutil.Scale(10 * time.Second)):
		t.Fatal("the shell that started the escapee did not exit")
	}
	pids, err := g.Members()
	if err != nil || !slices.Contains(pids, esc) {
		t.Fatalf("want the setsid'd %d among the members, have %v %v", esc, pids, err)
	}
	if pop, err := g.Populated(); !pop || err != nil {
		t.Fatalf("want populated, have %v %v", pop, err)
	}
	g.Signal(syscall.SIGTERM) // ignored
	if empty, err := g.Wait(100 * time.Millisecond); empty || err != nil {
		t.Fatalf("want a member left after TERM, have empty=%v %v", empty, err)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if empty, err := g.Wait(testutil.Scale(10 * time.Second)); !empty || err != nil {
		t.Fatalf("want empty after Kill, have empty=%v %v", empty, err)
	}
	if procstat.Running(esc) { // a zombie until init reaps it: not running
		t.Fatalf("setsid'd %d still runs after Kill", esc)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) {
		t.Fatalf("want %s removed, have %v", g.Dir(), err)
	}
}

// A nested job: a cgroup created inside one that has a member of its own
// (no controllers enabled, so the no-internal-process rule does not apply)
// takes a process; the outer one lists, kills and removes both.
func TestNestedGroupInsideAPopulatedOne(t *testing.T) {
	outer, err := Create(realParent(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outer.Kill(); outer.Close() })
	a := startIn(t, outer, "sleep", "30")
	inner, err := Create(outer.Dir())
	if err != nil {
		t.Fatalf("create a cgroup inside a populated one: %v", err)
	}
	b := startIn(t, inner, "sleep", "30")
	pids, _ := outer.Members()
	if !slices.Contains(pids, a.Process.Pid) || !slices.Contains(pids, b.Process.Pid) {
		t.Fatalf("want %d and %d among the outer members, have %v", a.Process.Pid, b.Process.Pid, pids)
	}
	if err := outer.Kill(); err != nil {
		t.Fatal(err)
	}
	if empty, err := outer.Wait(testutil.Scale(10 * time.Second)); !empty || err != nil {
		t.Fatalf("want empty, have %v %v", empty, err)
	}
	if pop, _ := inner.Populated(); pop {
		t.Fatal("the nested cgroup survived the outer Kill")
	}
	unix.Close(inner.fd) // the outer removes the nested directory
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outer.Dir()); !os.IsNotExist(err) {
		t.Fatalf("want %s removed, have %v", outer.Dir(), err)
	}
}

// Sweep removes the empty job cgroups of dead creators, never a populated
// one, one whose creator lives, or a young one (its creator may live in
// another pid namespace); Create sweeps nothing.
func TestSweepRemovesWhatDeadCreatorsLeft(t *testing.T) {
	base, err := Create(realParent(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Kill(); base.Close() })
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	d := dead.Process.Pid
	emptyDead := filepath.Join(base.Dir(), fmt.Sprintf("%s%d-aaaa", Prefix, d))
	busyDead := filepath.Join(base.Dir(), fmt.Sprintf("%s%d-bbbb", Prefix, d))
	live := filepath.Join(base.Dir(), fmt.Sprintf("%s%d-cccc", Prefix, os.Getppid()))
	other := filepath.Join(base.Dir(), "not-ours")
	youngDead := filepath.Join(base.Dir(), fmt.Sprintf("%s%d-dddd", Prefix, d))
	for _, dir := range []string{emptyDead, busyDead, live, other, youngDead} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-sweepAge - time.Minute)
	for _, dir := range []string{emptyDead, busyDead, live, other} {
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatalf("age %s: %v", dir, err)
		}
	}
	moveInto(t, busyDead, startIn(t, base, "sleep", "30").Process.Pid)
	g, err := Create(base.Dir())
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(g.fd)
	if _, err := os.Stat(emptyDead); err != nil {
		t.Fatalf("Create swept %s: %v", emptyDead, err)
	}
	Sweep(base.Dir())
	for dir, want := range map[string]bool{emptyDead: false, busyDead: true, live: true, other: true, youngDead: true, g.Dir(): true} {
		_, err := os.Stat(dir)
		if have := err == nil; have != want {
			t.Errorf("%s: want exists=%v, have %v", filepath.Base(dir), want, have)
		}
	}
}

func TestCheckRefusals(t *testing.T) {
	plain := t.TempDir()
	if _, err := Create(plain); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cgroup.kill") {
		t.Fatalf("no cgroup.kill: want the kernel named, have %v", err)
	}
	if ents, _ := os.ReadDir(plain); len(ents) != 0 {
		t.Fatalf("want the refused directory removed, have %v", ents)
	}
	base, err := Create(realParent(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	unit := filepath.Join(base.Dir(), "job.service")
	if err := os.Mkdir(unit, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, err := check(unit); !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUndelegated) || dir != unit || !strings.Contains(err.Error(), "Delegate=yes") {
		t.Fatalf("undelegated unit: want the directory and Delegate=yes named, have %q %v", dir, err)
	}
	if err := unix.Setxattr(unit, "trusted.delegate", []byte("1"), 0); err == nil {
		if _, err := check(unit); err != nil {
			t.Fatalf("delegated unit: want accepted, have %v", err)
		}
	} else {
		t.Logf("trusted.delegate not settable here (%v); delegated case not checked", err)
	}
	if _, err := check(base.Dir()); err != nil {
		t.Fatalf("own job cgroup: want accepted, have %v", err)
	}
}

// A sweep looks at a bounded number of job cgroups, whatever the parent
// holds, and over a few runs reaches them all.
func TestSweepIsBounded(t *testing.T) {
	base, err := Create(realParent(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Kill(); base.Close() })
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-sweepAge - time.Minute)
	const n = 40
	for i := range n {
		dir := filepath.Join(base.Dir(), fmt.Sprintf("%s%d-%04d", Prefix, dead.Process.Pid, i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(dir, old, old)
	}
	count := func() int {
		m, _ := filepath.Glob(filepath.Join(base.Dir(), Prefix+"*"))
		return len(m)
	}
	sweep(base.Dir(), sweepLook, 4)
	if have := count(); have != n-4 {
		t.Fatalf("one sweep: want %d left (4 removed), have %d", n-4, have)
	}
	for i := 0; i < 50 && count() > 0; i++ {
		sweep(base.Dir(), sweepLook, 4)
	}
	if have := count(); have != 0 {
		t.Fatalf("after repeated sweeps: want none left, have %d", have)
	}
}

// Locate's usual-place path finds what /proc/self/mountinfo says.
func TestLocateAgreesWithMountinfo(t *testing.T) {
	have, err := Locate()
	needCgroup(t, err)
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mnt, root, err := findMount(mi)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	p, err := selfPath(pc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := place(mnt, root, p)
	if err != nil {
		t.Fatal(err)
	}
	if have != want {
		t.Fatalf("want %+v (mountinfo), have %+v", want, have)
	}
	if !knownDir(have.Dir, p) {
		t.Errorf("knownDir(%s, %s): want true for our own cgroup", have.Dir, p)
	}
	// A cgroup we are not in is not taken for ours, nor a non-root one
	// for the hierarchy's root.
	g, err := Create(have.Dir)
	needCgroup(t, err)
	t.Cleanup(func() { g.Close() })
	if knownDir(g.Dir(), "/elsewhere") || knownDir(g.Dir(), "/") {
		t.Errorf("knownDir(%s): want false for a cgroup we are not in", g.Dir())
	}
}

// moveInto moves pid into the cgroup dir (a job is born inside its
// cgroup; only a test moves a process in afterwards).
func moveInto(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatalf("move %d into %s: %v", pid, dir, err)
	}
}

// Remove takes an empty job cgroup away with one rmdir; with a member or
// a nested cgroup left it removes nothing and keeps the descriptor, so
// Close (or leaving it) is still the caller's.
func TestRemoveOnlyWhatIsOver(t *testing.T) {
	g, err := Create(realParent(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Kill(); g.Close() })
	s := startIn(t, g, "sleep", "30")
	if g.Remove() {
		t.Fatalf("Remove of %s with a member: want false, have true", g.Dir())
	}
	if g.FD() < 0 {
		t.Fatal("Remove that failed closed the descriptor")
	}
	s.Process.Kill()
	<-s.done
	inner, err := Create(g.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if g.Remove() {
		t.Fatal("Remove with a nested cgroup below: want false, have true")
	}
	if !inner.Remove() {
		t.Fatalf("Remove of the empty nested %s: want true", inner.Dir())
	}
	if !g.Remove() {
		t.Fatalf("Remove of the empty %s: want true", g.Dir())
	}
	if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) || g.FD() != -1 {
		t.Fatalf("want %s removed and its descriptor closed, have %v, fd %d", g.Dir(), err, g.FD())
	}
}

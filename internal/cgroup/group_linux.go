package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is one job cgroup. Its methods may be called from several
// goroutines; Close must be the last call.
type Group struct {
	dir string
	fd  int // the directory, open for CLONE_INTO_CGROUP; -1 once closed
}

// Create makes a new job cgroup leasewrap-<pid>-<random> under parent (a
// directory Parent returned, or a job cgroup's directory for a nested
// one). A kernel without cgroup.kill (before 5.14) is refused with an
// error wrapping ErrUnavailable. The job cgroups that dead creators left
// are Sweep's, not Create's: a run starts without that work.
func Create(parent string) (*Group, error) {
	name, err := newName()
	if err != nil {
		return nil, fmt.Errorf("cgroup: name a job cgroup under %s: %w", parent, err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: create job cgroup %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		unix.Rmdir(dir)
		return nil, fmt.Errorf("%w: %s has no cgroup.kill (not a cgroup v2 directory, or a kernel before 5.14): %v", ErrUnavailable, dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Rmdir(dir)
		return nil, fmt.Errorf("cgroup: open job cgroup %s: %w", dir, err)
	}
	return &Group{dir: dir, fd: fd}, nil
}

// Open returns the job cgroup at dir, made by another process (a job
// guard's view of its leasewrap's cgroup); it has no FD.
func Open(dir string) *Group { return &Group{dir: dir, fd: -1} }

// Dir is the cgroup's directory.
func (g *Group) Dir() string { return g.dir }

// FD is the cgroup's directory descriptor, for syscall.SysProcAttr's
// CgroupFD (with UseCgroupFD): the child is then born inside the cgroup,
// so nothing it does between fork and exec runs outside it.
func (g *Group) FD() int { return g.fd }

// Members lists the processes of the cgroup and of every cgroup below it
// (a nested job's). Zombies are not members: a process leaves its cgroup
// when it exits, before it is reaped.
func (g *Group) Members() ([]int, error) { return members(g.dir) }

func members(dir string) ([]int, error) {
	var out []int
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p != dir {
				return nil // a nested cgroup removed meanwhile
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p != dir {
				return filepath.SkipDir
			}
			return err
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("cgroup: list the members of %s: %w", dir, err)
	}
	return out, nil
}

// Signal sends sig to every member (see Members). A member that exits
// meanwhile is no error; a member that forks meanwhile may have a child
// that misses it (callers that must reach everything use Kill).
func (g *Group) Signal(sig syscall.Signal) error {
	pids, err := g.Members()
	for _, pid := range pids {
		unix.Kill(pid, sig)
	}
	return err
}

// Populated reads cgroup.events: whether a live process is left in the
// cgroup or below it.
func (g *Group) Populated() (bool, error) { return populated(g.dir) }

func populated(dir string) (bool, error) {
	path := filepath.Join(dir, "cgroup.events")
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("cgroup: read %s: %w", path, err)
	}
	return parsePopulated(b, path)
}

// parsePopulated reads the populated line of a cgroup.events text.
func parsePopulated(b []byte, path string) (bool, error) {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) == "1", nil
		}
	}
	return false, fmt.Errorf("cgroup: %s has no populated line", path)
}

// Wait returns true as soon as the cgroup is empty, false once d passed
// with a member still alive. The kernel wakes a poll(2) for POLLPRI on
// cgroup.events at each change of the file (rate-limited to one per
// 10 ms), so nothing is polled on a timer. Not inotify: closing an
// inotify instance waits for an SRCU grace period (milliseconds a run).
func (g *Group) Wait(d time.Duration) (bool, error) {
	path := filepath.Join(g.dir, "cgroup.events")
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("cgroup: open %s: %w", path, err)
	}
	defer f.Close()
	deadline := time.Now().Add(d)
	buf := make([]byte, 256)
	for {
		// Each read re-arms the poll: it returns once the file changed
		// since the last read.
		n, err := f.ReadAt(buf, 0)
		if err != nil && n == 0 {
			return false, fmt.Errorf("cgroup: read %s: %w", path, err)
		}
		pop, err := parsePopulated(buf[:n], path)
		if err != nil || !pop {
			return err == nil, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
		if _, err := unix.Poll(fds, int(left/time.Millisecond)+1); err != nil && err != unix.EINTR {
			return false, fmt.Errorf("cgroup: wait for %s to empty: %w", g.dir, err)
		}
	}
}

// Kill kills every process in the cgroup and below it at once
// (cgroup.kill): a process forking meanwhile cannot escape it.
func (g *Group) Kill() error {
	if err := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return fmt.Errorf("cgroup: kill %s: %w", g.dir, err)
	}
	return nil
}

// Close releases the directory descriptor and removes the cgroup and the
// empty cgroups below it (a nested job's that its own leasewrap could not
// remove). A cgroup that still has members is left, and said so.
func (g *Group) Close() error {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	return removeAll(g.dir)
}

// Remove ends a job cgroup whose job is over with one rmdir(2) and
// releases its descriptor. It reports false, keeping both, when that did
// not remove it (a member still there or exiting, a nested cgroup below:
// EBUSY): whether to leave it or Close it is the caller's call. Asking
// cgroup.events first would cost an open, a read and a close on every run
// for the rare job that left something behind.
func (g *Group) Remove() bool {
	if err := unix.Rmdir(g.dir); err != nil && err != unix.ENOENT {
		return false
	}
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	return true
}

// removeAll removes dir and the cgroups below it, deepest first. rmdir of
// a cgroup fails with EBUSY while a member is still exiting or a cgroup
// is below it; that is retried for a bounded time (about a second). The
// directory is read only then: a job cgroup with no nested one (the
// usual case) is removed by one rmdir.
func removeAll(dir string) error {
	if err := unix.Rmdir(dir); err == nil || err == unix.ENOENT {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, e := range ents {
		if e.IsDir() {
			removeAll(filepath.Join(dir, e.Name()))
		}
	}
	for i := 0; ; i++ {
		err := unix.Rmdir(dir)
		if err == nil || err == unix.ENOENT {
			return nil
		}
		if err != unix.EBUSY || i >= 100 {
			return fmt.Errorf("cgroup: remove %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sweepAge is how old a job cgroup must be before a sweep may remove it:
// a creator in another pid namespace (sharing our cgroup) looks dead to
// kill(2) while it may still be about to start its job there.
const sweepAge = 10 * time.Minute

// SweepEvery is how many runs share one sweep, on average: a leftover is
// made only by a SIGKILLed leasewrap (or one told to leave strays), and
// one sweep removes up to four, so a sweep in one run of eight keeps up
// with a leasewrap killed in up to one run of two.
const SweepEvery = 8

// Sweep removes, bounded, the job cgroups under parent that dead creators
// left (a SIGKILLed leasewrap cannot remove its own); a populated one is
// never touched (see sweep). It is meant for after a job has started,
// in one run of SweepEvery, not on the way to the start.
func Sweep(parent string) { sweep(parent, sweepLook, 4) }

// sweepLook bounds the job cgroups one sweep looks at (a kill(2) and a
// stat each), so a parent crowded with leftovers costs every run the same
// few system calls; each sweep starts at a random entry, so all are seen
// over a few runs.
const sweepLook = 8

// sweep looks at up to look job cgroups under parent and removes at most
// max of them: those whose creator is gone, that are older than sweepAge
// and that hold no process (cgroup.events says so for the whole subtree,
// so no live nested leasewrap is below one).
func sweep(parent string, look, max int) {
	f, err := os.Open(parent)
	if err != nil {
		return
	}
	ents, err := f.ReadDir(-1) // unsorted
	f.Close()
	if err != nil || len(ents) == 0 {
		return
	}
	start := mrand.IntN(len(ents))
	for i := range ents {
		e := ents[(start+i)%len(ents)]
		if max == 0 || look == 0 {
			return
		}
		pid, ok := creatorPID(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		look--
		if unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < sweepAge {
			continue
		}
		if pop, err := populated(dir); err != nil || pop {
			continue
		}
		removeAll(dir)
		max--
	}
}

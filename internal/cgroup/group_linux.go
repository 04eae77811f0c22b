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

// Create makes a job cgroup leasewrap-<pid>-<random> under parent; a kernel
// without cgroup.kill (before 5.14) is refused with ErrUnavailable.
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

// FD is the cgroup's directory descriptor for SysProcAttr.CgroupFD: the
// child is born inside the cgroup.
func (g *Group) FD() int { return g.fd }

// Members lists the processes of the cgroup and the cgroups below it;
// zombies are not members.
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

// Signal sends sig to every member; a child forked meanwhile may miss it
// (Kill reaches everything).
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

// Wait returns true as soon as the cgroup is empty, false once d passed.
// It polls cgroup.events for POLLPRI (not inotify, whose close waits for an
// SRCU grace period).
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

// Close releases the descriptor and removes the cgroup and the empty ones
// below it; one with members is left, with an error.
func (g *Group) Close() error {
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	return removeAll(g.dir)
}

// Remove ends a finished job's cgroup with one rmdir(2) and releases its
// descriptor; false (EBUSY) keeps both, for the caller to leave or Close.
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

// removeAll removes dir and the cgroups below it, deepest first, retrying
// EBUSY (a member still exiting) for about a second.
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

// sweepAge is how old a job cgroup must be before a sweep may remove it: a
// creator in another pid namespace looks dead to kill(2).
const sweepAge = 10 * time.Minute

// SweepEvery is how many runs share one sweep on average; removing up to
// four a sweep keeps up with a leasewrap SIGKILLed in one run of two.
const SweepEvery = 8

// Sweep removes, bounded, empty job cgroups under parent left by dead
// creators; call it after a job started, in one run of SweepEvery.
func Sweep(parent string) { sweep(parent, sweepLook, 4) }

// sweepLook bounds the job cgroups one sweep looks at, from a random entry.
const sweepLook = 8

// sweep removes up to max of look job cgroups whose creator is gone, older
// than sweepAge and unpopulated (cgroup.events covers the whole subtree).
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

package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// The seed's bounded wait: every contended lock is retried every 25 ms for
// at most 10 s, then reported instead of blocking forever.
const (
	LockWaitBudget       = 10 * time.Second
	LockWaitPollInterval = 25 * time.Millisecond
)

// flock and tryLock are fdlock's (the one x/sys/unix flock helper).
func flock(f *os.File, how int) error           { return fdlock.Flock(f, how) }
func tryLock(f *os.File, how int) (bool, error) { return fdlock.Try(f, how) }

// lockFile opens (creating) the lock file at path and locks it with the
// bounded wait; on failure nothing stays open.
func (s *Store) lockFile(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := s.lockBounded(ctx, f, path, how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockBounded is lock_file_bounded: try, then poll every s.lockPoll until
// s.lockBudget has passed (a *LockTimeoutError) or ctx ends.
func (s *Store) lockBounded(ctx context.Context, f *os.File, path string, how int) error {
	waited, err := fdlock.Wait(ctx, f, how, s.lockPoll, s.lockBudget, s.now)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fdlock.ErrTimeout):
		return &LockTimeoutError{Path: path, Waited: waited}
	case ctx.Err() != nil:
		return fmt.Errorf("waiting for the session lock at %s: %w", path, ctx.Err())
	}
	return &IOError{Op: "flock", Path: path, Err: err}
}

// openLockFile is open_lock_file: create the parent directories and open
// (creating, never truncating) the lock file read-write.
func openLockFile(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, &IOError{Op: "create directory", Path: dir, Err: err}
	}
	// Not through a symlink, not blocking on a FIFO, only a regular file
	// with one link (a hard link planted to another file is refused, so
	// it is never locked), never truncated. The seed follows links; no
	// peer creates one here, so refusing loses nothing.
	f, err := safefile.Open(path, os.O_RDWR|os.O_CREATE, 0o666)
	var ue *safefile.UnsafeError
	if errors.As(err, &ue) {
		return nil, unsafeLock(path, ue)
	}
	if err != nil {
		return nil, &IOError{Op: "open lock file", Path: path, Err: err}
	}
	return f, nil
}

// unsafeLock refuses a lock file someone planted (symlink, FIFO, hard
// link): never followed, written or locked. It matches safefile.ErrUnsafe,
// which the Lockers report as a refusal.
func unsafeLock(path string, ue *safefile.UnsafeError) error {
	return &IOError{Op: "open lock file: it " + ue.What + ", which leasewrap refuses to follow or lock; check who planted it and remove it", Path: path, Err: safefile.ErrUnsafe}
}

// readRecord reads a record file. It refuses anything but a regular file
// (opened non-blocking, so a FIFO planted in the owner directory is an
// unreadable record instead of a hang). It reads at most MaxRecordBytes+1
// bytes: DecodeOwner refuses a record longer than the bound.
func readRecord(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s, not a regular file", path, safefile.Kind(fi.Mode()))
	}
	return io.ReadAll(io.LimitReader(f, MaxRecordBytes+1))
}

// processAlive is process_is_alive: kill(pid, 0) succeeds or fails with
// EPERM. Like the seed, a pid beyond i32 is dead and pid 0 (the caller's
// process group) is alive.
func processAlive(pid uint32) bool {
	if pid > math.MaxInt32 {
		return false
	}
	err := unix.Kill(int(pid), 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// sameFile reports whether the open f is still the file at path.
func sameFile(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

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

// The seed's bounded wait: retry every 25 ms for at most 10 s.
const (
	LockWaitBudget       = 10 * time.Second
	LockWaitPollInterval = 25 * time.Millisecond
)

func flock(f *os.File, how int) error { return fdlock.Flock(f, how) }

// lockFile opens (creating) and locks path with the bounded wait.
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

// lockBounded is lock_file_bounded: poll every s.lockPoll for s.lockBudget.
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

// openLockFile is open_lock_file: mkdir -p, then open read-write, creating.
func openLockFile(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, &IOError{Op: "create directory", Path: dir, Err: err}
	}
	// Only a regular single-link file, never through a symlink or FIFO.
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

// unsafeLock refuses a planted lock file; it matches safefile.ErrUnsafe.
func unsafeLock(path string, ue *safefile.UnsafeError) error {
	return &IOError{Op: "open lock file: it " + ue.What + ", which leasewrap refuses to follow or lock; check who planted it and remove it", Path: path, Err: safefile.ErrUnsafe}
}

// readRecord reads at most MaxRecordBytes+1 bytes of a regular file.
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

// processAlive is process_is_alive: kill(pid, 0) succeeds or fails with EPERM
// (a pid beyond i32 is dead, pid 0 alive, as in the seed).
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

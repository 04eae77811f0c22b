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

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// The seed's bounded wait: every contended lock is retried every 25 ms for
// at most 10 s, then reported instead of blocking forever.
const (
	LockWaitBudget       = 10 * time.Second
	LockWaitPollInterval = 25 * time.Millisecond
)

// flock applies how (LOCK_SH, LOCK_EX, LOCK_UN, optionally |LOCK_NB) to f's
// open file description, retrying EINTR.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// tryLock is the seed's try_lock_file_{shared,exclusive}: (true, nil) when
// obtained, (false, nil) when it would block.
func tryLock(f *os.File, how int) (bool, error) {
	err := flock(f, how|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}

// lockBounded is lock_file_bounded: try, then poll every s.lockPoll until
// s.lockBudget has passed (a *LockTimeoutError) or ctx ends.
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

func (s *Store) lockBounded(ctx context.Context, f *os.File, path string, how int) error {
	started := s.now()
	for {
		ok, err := tryLock(f, how)
		if err != nil {
			return &IOError{Op: "flock", Path: path, Err: err}
		}
		if ok {
			return nil
		}
		waited := s.now().Sub(started)
		if waited >= s.lockBudget {
			return &LockTimeoutError{Path: path, Waited: waited}
		}
		t := time.NewTimer(min(s.lockPoll, s.lockBudget-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for the session lock at %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
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
		return nil, &IOError{Op: "open lock file: it " + ue.What + ", which leasewrap refuses to follow or lock; check who planted it and remove it", Path: path, Err: unix.ELOOP} // reported as a refusal
	}
	if err != nil {
		return nil, &IOError{Op: "open lock file", Path: path, Err: err}
	}
	return f, nil
}

// readRecord reads a record file. It refuses anything but a regular file
// (opened non-blocking, so a FIFO planted in the owner directory is an
// unreadable record instead of a hang).
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
		return nil, fmt.Errorf("%s is a %s, not a regular file", path, fileKind(fi.Mode()))
	}
	return io.ReadAll(f)
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
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

package flock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/safefile"
	"github.com/leasewrap/leasewrap/lease"
)

// Kind is the kind's name (LEASEWRAP_KIND).
const Kind = "flock"

// Config configures a Locker.
type Config struct {
	// Path is the lock file, made absolute (LEASEWRAP_KEY).
	Path string
	// Shared takes LOCK_SH instead of LOCK_EX (flock(1) -s).
	Shared bool
	// Holder is exported as LEASEWRAP_HOLDER; a flock records no holder.
	Holder string
}

// Locker takes the flock of one file. It keeps the file open across attempts
// (as flock(1) -w), so retries wake no other waiter and a grant while waiting
// is the next Acquire's. Close releases a descriptor no lease took over. Not
// safe for concurrent use.
type Locker struct {
	path   string
	shared bool
	holder string
	f      *os.File // opened by the first attempt; handed to the Lease on success
}

var (
	_ lease.Locker   = (*Locker)(nil)
	_ lease.Notifier = (*Locker)(nil)
	_ lease.Identity = (*Locker)(nil)
)

// NewLocker checks c (path set, not a directory, parent exists) and returns its
// Locker.
func NewLocker(c Config) (*Locker, error) {
	if c.Path == "" {
		return nil, errors.New("the lock file path is empty")
	}
	if c.Holder == "" {
		return nil, errors.New("the holder identity is empty")
	}
	path, err := filepath.Abs(c.Path)
	if err != nil {
		return nil, fmt.Errorf("lock file %s: %w", c.Path, err)
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("lock file %s is a directory: leasewrap flock locks only a regular file (flock(1) also locks directories); give a file in it, e.g. %s", path, filepath.Join(path, ".lock"))
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("lock file %s: its directory %s: %w (leasewrap creates the file, not its directory)", path, dir, unwrapPath(err))
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("lock file %s: %s is not a directory", path, dir)
	}
	return &Locker{path: path, shared: c.Shared, holder: c.Holder}, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Kind is "flock".
func (l *Locker) Kind() string { return Kind }

// Holder is the configured holder, known before the lock is taken (lease.Identity).
func (l *Locker) Holder() string { return l.holder }

// Key is the lock file's absolute path.
func (l *Locker) Key() string { return l.path }

// file opens the lock file once and returns the descriptor every attempt locks.
func (l *Locker) file() (*os.File, error) {
	if l.f == nil {
		f, err := open(l.path)
		if err != nil {
			return nil, err
		}
		l.f = f
	}
	return l.f, nil
}

// Acquire tries once to lock the file (LOCK_NB). Contention is a
// *lease.HeldError naming the pid from /proc/locks; a planted symlink, FIFO,
// device or hard link matches lease.ErrRefused.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	if _, err := l.file(); err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if l.shared {
		how = unix.LOCK_SH
	}
	ok, err := fdlock.Try(l.f, how)
	if err != nil {
		return nil, fmt.Errorf("flock %s: %w", l.path, err)
	}
	if !ok {
		return nil, l.held()
	}
	f := l.f
	l.f = nil
	return &Lease{f: f, holder: l.holder}, nil
}

// Close closes the descriptor of attempts that did not take the lock;
// idempotent, harmless after a successful Acquire.
func (l *Locker) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// held is the contention error, naming what /proc/locks knows.
func (l *Locker) held() error {
	h := &lease.HeldError{Kind: Kind, Key: l.path, Detail: "another process holds a flock on it (flock(1) or leasewrap)"}
	var st unix.Stat_t
	if unix.Fstat(int(l.f.Fd()), &st) == nil {
		if pid, mode, ok := lockHolder(procLocks, uint64(st.Dev), st.Ino); ok {
			h.PID = pid
			h.Detail = takenBy(pid, mode)
		}
	}
	return h
}

// takenBy names the process that called flock(2) (it may have exited, leaving
// the lock with its descriptor's inheritors).
func takenBy(pid int, mode string) string {
	if pid == 0 {
		return mode + " lock taken by a process outside this pid namespace"
	}
	st, err := procstat.Read(pid)
	if err != nil || !st.Live() {
		return mode + " lock taken by a process that has exited; processes it passed the descriptor to still hold it"
	}
	return fmt.Sprintf("%s lock taken by %q; it lasts while any process holding that descriptor runs", mode, st.Comm)
}

// open opens the lock file as flock(1) does (O_RDONLY|O_CREAT|O_NOCTTY, 0666)
// under safefile's rules.
func open(path string) (*os.File, error) {
	f, err := safefile.Open(path, os.O_RDONLY|os.O_CREATE|unix.O_NOCTTY, 0o666)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil {
			err = safefile.CheckOpened(fi, path)
		}
		if err != nil {
			f.Close()
		}
	}
	var ue *safefile.UnsafeError
	switch {
	case err == nil:
		return f, nil
	case errors.As(err, &ue):
		return nil, fmt.Errorf("%w: lock file %v", lease.ErrRefused, err)
	}
	return nil, fmt.Errorf("open lock file %s: %w", path, unwrapPath(err))
}

// Lease is a held flock: the open file description that carries it.
type Lease struct {
	f      *os.File
	holder string
}

var (
	_ lease.Lease      = (*Lease)(nil)
	_ lease.FileHolder = (*Lease)(nil)
)

// Holder is the configured holder identity (LEASEWRAP_HOLDER).
func (s *Lease) Holder() string { return s.holder }

// Env adds nothing: LEASEWRAP_FD says which descriptor holds the lock.
func (*Lease) Env() []string { return nil }

// TTL is 0: a flock lasts while its descriptor is open.
func (*Lease) TTL() time.Duration { return 0 }

// Renew succeeds: nobody can take a flock from an open descriptor.
func (*Lease) Renew(context.Context) error { return nil }

// Done is nil: a held flock is never lost.
func (*Lease) Done() <-chan struct{} { return nil }

// File is the locked descriptor the command inherits.
func (s *Lease) File() *os.File { return s.f }

// Finish closes leasewrap's descriptor, never LOCK_UN (the job's stragglers may
// share the open file description).
func (s *Lease) Finish(context.Context, lease.Result) error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

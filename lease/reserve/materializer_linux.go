package reserve

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
)

// MaterializerLease is a run creator's lifetime flock,
// <home>/idempotency/materializers/<run_id>.lease, locked exclusively. The child
// inherits it (fd 3 via ExtraFiles; leasewrap's copy stays close-on-exec), so a
// creator is live exactly while some process holds the lock.
type MaterializerLease struct {
	file *os.File
	path string
}

// AcquireMaterializerLease creates and locks runID's lease file (no symlink, FIFO
// or hard link: ErrUnsafePath; never truncated). The run id is fresh, so a held
// lock is an error, never waited for.
func AcquireMaterializerLease(l Layout, runID string) (*MaterializerLease, error) {
	if err := ValidateRunID(runID); err != nil {
		return nil, err
	}
	dir := l.MaterializerDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("reserve: mkdir %s: %w", dir, err)
	}
	path := l.MaterializerPath(runID)
	f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, fmt.Errorf("reserve: open %s: %w", path, err)
	}
	if ok, err := fdlock.Try(f, unix.LOCK_EX); !ok {
		f.Close()
		if err == nil {
			err = unix.EWOULDBLOCK
		}
		return nil, fmt.Errorf("reserve: lock %s: %w (another process already materializes run %s)", path, err, runID)
	}
	return &MaterializerLease{file: f, path: path}, nil
}

// Path is the absolute path of the lease file.
func (m *MaterializerLease) Path() string { return m.path }

// File is the locked descriptor, for the child to inherit.
func (m *MaterializerLease) File() *os.File { return m.file }

// Close removes the lease file and closes the descriptor, as orchestratectl's
// Drop does, never LOCK_UN (the child may share the lock). It is idempotent.
func (m *MaterializerLease) Close() error {
	if m == nil || m.file == nil {
		return nil
	}
	rmErr := os.Remove(m.path)
	if errors.Is(rmErr, os.ErrNotExist) {
		rmErr = nil
	}
	err := m.file.Close()
	m.file = nil
	if rmErr != nil {
		return fmt.Errorf("reserve: remove %s: %w", m.path, rmErr)
	}
	return err
}

// Abandon closes the descriptor but keeps the file, so the record reads as a dead
// creator's and is reclaimed. Idempotent; Close after it does nothing.
func (m *MaterializerLease) Abandon() {
	if m == nil || m.file == nil {
		return
	}
	m.file.Close()
	m.file = nil
}

// Liveness is what can be proved about a record's creator.
type Liveness int

const (
	// Unverifiable: lease file missing or not lockable; never reclaimed.
	Unverifiable Liveness = iota
	// Live: the creator's lease is held.
	Live
	// Dead: the lease file exists and nobody holds it.
	Dead
	// LegacyCreator: a legacy record has no creator at all. Never reclaimed.
	LegacyCreator
)

func (l Liveness) String() string {
	switch l {
	case Live:
		return "live"
	case Dead:
		return "dead"
	case Unverifiable:
		return "unverifiable"
	case LegacyCreator:
		return "legacy"
	}
	return fmt.Sprintf("Liveness(%d)", int(l))
}

// MaterializerLiveness try-locks the lease file (no symlink, never created):
// obtained → Dead (dropped at once), would block → Live, else Unverifiable.
func MaterializerLiveness(path string) Liveness {
	switch p, _ := fdlock.Probe(path, fdlock.ProbeOpts{NoFollow: true}); p {
	case fdlock.Free:
		return Dead
	case fdlock.Held:
		return Live
	}
	return Unverifiable
}

// CreatorLiveness judges rec's creator: legacy → LegacyCreator; with a lease →
// MaterializerLiveness; without one it is never Dead: Live if its pid runs with
// the recorded start time (±1 s), else Unverifiable.
func CreatorLiveness(rec *Record) Liveness {
	c := rec.Creator
	if c == nil {
		return LegacyCreator
	}
	if c.HasLeasePath() {
		return MaterializerLiveness(c.MaterializerLeasePath)
	}
	if c.PIDStartSecs != nil && c.PID > 0 {
		if start, err := ProcessStartSecs(int(c.PID)); err == nil && absDiff(start, *c.PIDStartSecs) <= 1 {
			return Live
		}
	}
	return Unverifiable
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

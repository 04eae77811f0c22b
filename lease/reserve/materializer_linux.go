package reserve

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
)

// MaterializerLease is the lifetime flock of a run's creator:
// <home>/idempotency/materializers/<run_id>.lease, locked exclusively. The
// process tree doing the work must inherit the descriptor so it keeps the
// lock even if leasewrap dies; orchestratectl clears FD_CLOEXEC for that,
// leasewrap keeps FD_CLOEXEC on its own copy and hands the descriptor over
// through exec.Cmd.ExtraFiles (fd 3), so no other process it starts gets a
// stray copy at the original number. A creator is live exactly as long as
// some process holds that lock.
type MaterializerLease struct {
	file *os.File
	path string
}

// AcquireMaterializerLease creates (if needed) and locks the lease file of
// runID, never through a symlink, a FIFO or a hard link planted at its
// name (refused with ErrUnsafePath), and never truncating it. The run id is fresh, so the lock is never contended in normal
// operation: a held lock is reported as an error (ErrHeld-like contention
// would mean two creators share a run id), never waited for.
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

// Close removes the lease file and closes the descriptor, as
// orchestratectl's Drop does. It does not LOCK_UN: the lock belongs to the
// open file description the child shared; it ends when the last process
// holding it closes it. Close is idempotent.
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

// Abandon closes the descriptor and keeps the lease file: the record that
// names it becomes a dead creator's (the file there, unlocked once every
// descriptor sharing the lock is closed), which the protocol reclaims. It
// is how a creator whose record could not be settled leaves it. Abandon
// is idempotent, and Close after it does nothing.
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
	// Unverifiable: liveness cannot be decided (lease file missing or not
	// lockable). Never reclaimed.
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

// MaterializerLiveness tries to lock the lease file at path: obtained →
// Dead (the try lock is dropped at once), would block → Live, missing or
// any other error (a directory or other non-regular file too) →
// Unverifiable. The file is opened without following a symlink and never
// created.
func MaterializerLiveness(path string) Liveness {
	switch p, _ := fdlock.Probe(path, fdlock.ProbeOpts{NoFollow: true}); p {
	case fdlock.Free:
		return Dead
	case fdlock.Held:
		return Live
	}
	return Unverifiable
}

// CreatorLiveness decides the liveness of rec's creator. A legacy record
// (no creator) is LegacyCreator. A creator with a materializer lease is
// judged by MaterializerLiveness. A creator without one (written before
// materializer leases existed) is never proved dead: it is Live when its
// pid runs with the recorded start time (±1 s), else Unverifiable.
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

package session

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasewrap/leasewrap/internal/fdlock"
)

// Store is one session-lease root, safe for concurrent use.
type Store struct {
	root string

	// Test seams.
	lockBudget time.Duration
	lockPoll   time.Duration
	now        func() time.Time
	pid        func() int
	executable func() (string, error)
}

// NewStore returns the Store of root; nothing is created until used.
func NewStore(root string) *Store {
	return &Store{
		root:       root,
		lockBudget: LockWaitBudget,
		lockPoll:   LockWaitPollInterval,
		now:        time.Now,
		pid:        os.Getpid,
		executable: currentExe,
	}
}

// Root returns the root directory.
func (s *Store) Root() string { return s.root }

// LockPath is the session's coordinator lock: <root>/locks/<sid>.lock.
func (s *Store) LockPath(sid ID) string {
	return filepath.Join(s.root, "locks", sid.String()+".lock")
}

// OwnerDir is the session's owner-record directory: <root>/leases/<sid>.
func (s *Store) OwnerDir(sid ID) string {
	return filepath.Join(s.root, "leases", sid.String())
}

// ownerPath is <owner dir>/<token>.json.
func ownerPath(dir, token string) string { return filepath.Join(dir, token+".json") }

// tempPath is the seed's with_extension("json.tmp-<token>"): "<x>.json.tmp-<token>".
func tempPath(path, token string) string {
	return strings.TrimSuffix(path, ".json") + ".json.tmp-" + token
}

// hasJSONExt is Rust's Path::extension() == Some("json").
func hasJSONExt(name string) bool {
	if name == ".." {
		return false
	}
	i := strings.LastIndexByte(name, '.')
	return i > 0 && name[i+1:] == "json"
}

// Acquire registers this process as an owner of sid (acquire_session_lease):
// coordinator exclusive (bounded wait, else *LockTimeoutError), stale records
// pruned, an incompatible owner refused (*OwnedError), our record published
// under a shared flock. An undecodable record is an *UnverifiableError, untouched.
func (s *Store) Acquire(ctx context.Context, sid ID, oc OwnerContext) (*OwnerGuard, error) {
	return s.acquire(ctx, sid, oc, nil)
}

// acquire is Acquire publishing through prep when it can.
func (s *Store) acquire(ctx context.Context, sid ID, oc OwnerContext, prep *preparedRecord) (*OwnerGuard, error) {
	if oc.StorageWriterEpoch == nil {
		return nil, &MissingWriterEpochError{SessionID: sid}
	}
	lockPath := s.LockPath(sid)
	coordinator, err := s.lockPrivate(ctx, lockPath, lockEX)
	if err != nil {
		return nil, err
	}
	defer coordinator.Close()
	return s.register(sid, &oc, func(o *Owner) bool { return !compatible(o, &oc) }, prep)
}

// register runs with the coordinator held: prune, refuse, publish.
func (s *Store) register(sid ID, oc *OwnerContext, refuses func(*Owner) bool, prep *preparedRecord) (*OwnerGuard, error) {
	if err := s.refuseOwner(sid, refuses); err != nil {
		return nil, err
	}
	dir := s.OwnerDir(sid)
	owner := newOwner(sid, oc, s.pid(), s.now(), s.executable)
	path := ownerPath(dir, owner.LeaseToken)
	f, err := writeOwnerRecord(path, &owner, prep)
	if err != nil {
		return nil, err
	}
	return &OwnerGuard{path: path, file: f, owner: owner}, nil
}

// refuseOwner prunes sid's stale records and returns an *OwnedError for the
// first remaining owner refuses matches.
func (s *Store) refuseOwner(sid ID, refuses func(*Owner) bool) error {
	dir := s.OwnerDir(sid)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return &IOError{Op: "create directory", Path: dir, Err: err}
	}
	e, err := pruneAndFind(dir, refuses)
	if err != nil || e == nil {
		return err
	}
	return &OwnedError{
		SessionID: sid,
		Owner:     e.owner,
		Path:      e.path,
		Liveness:  classifyLiveness(e.path, &e.owner),
		Summary:   FormatOwner(&e.owner),
	}
}

type ownerEntry struct {
	path  string
	owner Owner
}

// readOwner is read_owner_metadata.
func readOwner(path string) (*Owner, error) {
	data, err := readRecord(path)
	if err != nil {
		return nil, err
	}
	return DecodeOwner(data)
}

// jsonEntries lists dir's *.json names in read_dir order (not sorted).
func jsonEntries(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return jsonNames(d, dir)
}

func jsonNames(d *os.File, dir string) ([]string, error) {
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range ents {
		if hasJSONExt(e.Name()) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, nil
}

// pruneAndFind is prune_dead_owner_records plus find_incompatible_owner (or
// first_owner) in one pass, stopping at the first undecodable record; with the
// coordinator held records can only go.
func pruneAndFind(dir string, refuses func(*Owner) bool) (*ownerEntry, error) {
	paths, err := jsonEntries(dir)
	if err != nil {
		return nil, &IOError{Op: "read directory", Path: dir, Err: err}
	}
	var found *ownerEntry
	for _, p := range paths {
		o, err := readOwner(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released since the listing: not a refusal
		}
		if err != nil {
			return nil, &UnverifiableError{Path: p, Err: err}
		}
		if classifyLiveness(p, o) == Stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, &IOError{Op: "remove stale owner record", Path: p, Err: err}
			}
			continue
		}
		if found == nil && refuses(o) {
			found = &ownerEntry{path: p, owner: *o}
		}
	}
	return found, nil
}

// classifyLiveness is classify_owner_liveness. Schema 3: an exclusive try-lock
// obtained (or record missing) is Stale, would-block Live, other failures
// Unverifiable; schema 2: kill(pid, 0); others Unverifiable. Changes nothing.
func classifyLiveness(path string, o *Owner) Liveness {
	switch o.SchemaVersion {
	case 3:
		switch p, _ := fdlock.Probe(path, fdlock.ProbeOpts{}); p {
		case fdlock.Missing, fdlock.Free:
			return Stale
		case fdlock.Held:
			return Live
		}
		return Unverifiable // a directory or FIFO is no lockable record
	case 2:
		if processAlive(o.PID) {
			return Live
		}
		return Stale
	}
	return Unverifiable
}

package session

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

const (
	lockSH = unix.LOCK_SH
	lockEX = unix.LOCK_EX
	lockUN = unix.LOCK_UN
)

// writeOwnerRecord is write_owner_metadata: create <path>.tmp-<token>
// exclusively, write the pretty JSON, fsync, take the SHARED flock that is
// the owner's liveness, then rename into place. The temp name is the
// seed's; when it is taken (a crash leftover, or something planted there:
// the token is guessable) that entry is left alone and
// "<path>.tmp-<token>.<16 random hex>" is used instead, which no reader
// takes for a record (its extension is not .json). Nothing is opened
// through a symlink and rename replaces, never follows, what is at path. The returned file holds the
// lock; closing it (and every descriptor sharing its open file description)
// makes the record stale.
//
// prep, when not nil, is an unnamed file made while waiting
// (prepareRecord): the record is written into it, fsynced, locked shared
// and linked at path instead, which leaves no temp name to create on the
// path that counts and none behind after a crash. What a peer sees is the
// same: path appears at once, complete, durable and locked. If that fails
// for any reason the seed's named temp file is used as above.
func writeOwnerRecord(path string, o *Owner, prep *preparedRecord) (*os.File, error) {
	contents, err := EncodeOwner(o)
	if err != nil {
		prep.close()
		return nil, err
	}
	if f := prep.publish(path, contents); f != nil {
		return f, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, &IOError{Op: "create directory", Path: dir, Err: err}
	}
	seedTmp := tempPath(path, o.LeaseToken)
	f, tmp, err := safefile.CreateTemp(func(i int) (string, error) {
		if i == 0 {
			return seedTmp, nil
		}
		suffix, err := safefile.RandomHex(8)
		return seedTmp + "." + suffix, err
	}, os.O_RDWR, 0o666)
	if err != nil {
		return nil, &IOError{Op: "create owner record", Path: seedTmp, Err: err}
	}
	fail := func(op, p string, err error) (*os.File, error) {
		f.Close()
		os.Remove(tmp) // our own exclusive temp file; never published
		return nil, &IOError{Op: op, Path: p, Err: err}
	}
	if _, err := f.Write(contents); err != nil {
		return fail("write owner record", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fail("fsync owner record", tmp, err)
	}
	// The seed blocks here; nobody else can know this fresh temp file, so
	// would-block is an anomaly reported instead of waited on.
	if err := flock(f, lockSH|unix.LOCK_NB); err != nil {
		return fail("lock owner record shared", tmp, err)
	}
	crashPoint(crashPrePublish)
	if err := os.Rename(tmp, path); err != nil {
		return fail("publish owner record", path, err)
	}
	return f, nil
}

// OwnerGuard is a held owner registration (the seed's SessionLeaseGuard).
// It is not safe for concurrent use.
type OwnerGuard struct {
	path   string
	file   *os.File
	owner  Owner
	closed bool
}

// Owner returns the record this guard published.
func (g *OwnerGuard) Owner() Owner { return g.owner }

// Path returns the published record's path.
func (g *OwnerGuard) Path() string { return g.path }

// File returns the record's descriptor holding the shared flock (nil after
// Release). A process that inherits it keeps the owner live.
func (g *OwnerGuard) File() *os.File {
	if g.closed {
		return nil
	}
	return g.file
}

// Release removes the record if it still carries this guard's token, then
// closes the descriptor. It never LOCK_UNs: a child sharing the descriptor
// keeps its lock until it exits. Release is idempotent.
func (g *OwnerGuard) Release() error {
	if g.closed {
		return nil
	}
	g.closed = true
	var err error
	if g.unchanged() {
		// The name still holds the very file this guard wrote, with the
		// bytes it wrote: its token is ours. Read through our own
		// descriptor and compared as bytes, this is the seed's
		// read-and-compare without the open and the decode, which sit
		// between the job's end and the waiter's wake.
		fault.Point("session.mid-release")
		if rerr := os.Remove(g.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = &IOError{Op: "remove owner record", Path: g.path, Err: rerr}
		}
	} else {
		err = removeIfTokenMatches(g.path, g.owner.LeaseToken)
	}
	if cerr := g.file.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) && err == nil {
		err = &IOError{Op: "close owner record", Path: g.path, Err: cerr}
	}
	return err
}

// removeIfTokenMatches is remove_owner_metadata_if_token_matches: a record
// that is gone, does not decode or carries another token is left alone.
func removeIfTokenMatches(path, token string) error {
	o, err := readOwner(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("release: owner record %s left in place, it could not be read (%v); remove it by hand if no owner uses it", path, err)
	}
	if o.LeaseToken != token {
		return nil
	}
	fault.Point("session.mid-release")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &IOError{Op: "remove owner record", Path: path, Err: err}
	}
	return nil
}

// unchanged reports whether g's path still names the file g holds (not
// through a symlink) and that file still holds exactly the record g
// wrote. Any failure or difference is false: Release then reads and
// decodes the record as the seed does.
func (g *OwnerGuard) unchanged() bool {
	want, err := EncodeOwner(&g.owner)
	if err != nil {
		return false
	}
	var a, b unix.Stat_t
	fd := int(g.file.Fd())
	if unix.Fstat(fd, &a) != nil || unix.Lstat(g.path, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		return false
	}
	have := make([]byte, len(want)+1)
	n, err := unix.Pread(fd, have, 0)
	return err == nil && bytes.Equal(have[:n], want)
}

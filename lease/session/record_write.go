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
// exclusively (if taken, "<path>.tmp-<token>.<16 random hex>"), write the pretty
// JSON, fsync, take the SHARED flock that is the owner's liveness, rename into
// place. Nothing is followed. Closing the returned file (and every shared
// descriptor) makes the record stale. prep, when set, is written, locked and
// linked at path instead.
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
	// Nobody else knows this fresh file: would-block is an anomaly, not waited on.
	if err := flock(f, lockSH|unix.LOCK_NB); err != nil {
		return fail("lock owner record shared", tmp, err)
	}
	crashPoint(crashPrePublish)
	if err := os.Rename(tmp, path); err != nil {
		return fail("publish owner record", path, err)
	}
	return f, nil
}

// OwnerGuard is a held owner registration (the seed's SessionLeaseGuard), not
// safe for concurrent use.
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

// File returns the descriptor holding the shared flock (nil after Release); a
// process inheriting it keeps the owner live.
func (g *OwnerGuard) File() *os.File {
	if g.closed {
		return nil
	}
	return g.file
}

// Release removes the record if it carries this guard's token, then closes the
// descriptor (never LOCK_UN). It is idempotent.
func (g *OwnerGuard) Release() error {
	if g.closed {
		return nil
	}
	g.closed = true
	var err error
	if g.unchanged() {
		// Still our file with our bytes: our token, without a re-read.
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

// removeIfTokenMatches is remove_owner_metadata_if_token_matches: a gone,
// undecodable or other-token record is left alone.
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

// unchanged reports whether g's path still holds exactly g's file and record.
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

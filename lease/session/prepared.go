package session

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// preparedRecord is an owner record file a waiter makes before its next
// attempt: an unnamed file (O_TMPFILE) in the owner directory holding a
// provisional record of the same shape, written and fsynced, so the
// inode's creation and its block's allocation are done before the lease
// is free. The attempt that registers overwrites it with the real record
// (its token and times are taken then, as the seed takes them), fsyncs it
// again and links it into place. The provisional content is never
// visible: the file has no name until it holds the real record, durably.
// A waiter that dies frees it with its descriptor; nothing is left in the
// directory.
type preparedRecord struct {
	f   *os.File
	dir string
	n   int // bytes written so far
}

// prepareRecord makes the unnamed record file for sid's owner directory,
// or returns nil (no O_TMPFILE, /proc, space: the attempt then creates the
// seed's named temp file as it always did).
func prepareRecord(dir string, provisional *Owner) *preparedRecord {
	contents, err := EncodeOwner(provisional)
	if err != nil {
		return nil
	}
	f, err := safefile.CreateUnnamed(dir, 0o666)
	if err != nil {
		return nil
	}
	if _, err := f.Write(contents); err != nil || f.Sync() != nil {
		f.Close()
		return nil
	}
	return &preparedRecord{f: f, dir: dir, n: len(contents)}
}

// close drops an unused prepared file. It is safe on nil.
func (p *preparedRecord) close() {
	if p != nil && p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// publish writes contents into the prepared file, fsyncs it, locks it
// shared and links it at path (write_owner_metadata's steps, with link(2)
// for the rename: path carries our fresh token, so nothing is there to
// replace). It returns the locked file, or nil when any step failed; the
// prepared file is used up either way.
func (p *preparedRecord) publish(path string, contents []byte) *os.File {
	if p == nil || p.f == nil {
		return nil
	}
	f := p.f
	p.f = nil
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if filepath.Dir(path) != p.dir {
		return nil
	}
	if _, err := f.WriteAt(contents, 0); err != nil {
		return nil
	}
	if len(contents) != p.n && f.Truncate(int64(len(contents))) != nil {
		return nil
	}
	if f.Sync() != nil {
		return nil
	}
	if flock(f, lockSH|unix.LOCK_NB) != nil {
		return nil
	}
	crashPoint(crashPrePublish)
	if safefile.LinkUnnamed(f, path) != nil {
		return nil
	}
	ok = true
	return f
}

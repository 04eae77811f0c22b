package session

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// preparedRecord is a waiter's next owner record file: an unnamed O_TMPFILE in
// the owner directory holding a provisional record, written and fsynced before
// the lease is free. The registering attempt overwrites it with the real record,
// fsyncs and links it; the provisional content is never visible.
type preparedRecord struct {
	f   *os.File
	dir string
	n   int // bytes written so far
}

// prepareRecord makes the unnamed record file, or nil (use the named temp file).
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

func (p *preparedRecord) close() {
	if p != nil && p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// publish writes, fsyncs, locks shared and links the prepared file at path,
// returning it locked, or nil on failure.
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

package claim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// preparedClaim is the file of a waiter's next claim, created before the
// claim is free: an unnamed file (O_TMPFILE) in the claims directory. The
// attempt after a release writes the record into it and links it at the
// claim's path: link(2)'s exclusive create, as with the seed's
// .claim-tmp-* file, without creating (or, after the link, removing) a
// temp name on the path between the holder's release and the waiter's
// start. Nobody can see it before the link, and a waiter that dies frees
// it with its descriptor.
type preparedClaim struct {
	f   *os.File
	dir string
}

// prepareClaim makes the unnamed file in dir, or returns nil (no
// O_TMPFILE, no directory yet: the attempt uses the seed's temp file).
func prepareClaim(dir string) *preparedClaim {
	f, err := safefile.CreateUnnamed(dir, fileMode)
	if err != nil {
		return nil
	}
	return &preparedClaim{f: f, dir: dir}
}

// close drops an unused prepared file. It is safe on nil.
func (p *preparedClaim) close() {
	if p != nil && p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// ready reports whether p holds a file.
func (p *preparedClaim) ready() bool { return p != nil && p.f != nil }

// create publishes content at path through the prepared file. used is
// false when it could not be tried or failed for a reason the seed's
// temp file may not share (the caller then creates that way); otherwise
// err is nil (the claim is ours, the file used up) or errAlreadyHeld (the
// path exists; the file is emptied and kept for the next attempt).
func (p *preparedClaim) create(path string, content []byte) (used bool, err error) {
	if !p.ready() || filepath.Dir(path) != p.dir {
		return false, nil
	}
	if _, err := p.f.WriteAt(content, 0); err != nil || p.f.Truncate(int64(len(content))) != nil {
		p.close()
		return false, nil
	}
	fault.Point("claim.after-temp-write")
	lerr := safefile.LinkUnnamed(p.f, path)
	fault.Point("claim.after-link")
	switch {
	case lerr == nil:
		p.close()
		return true, nil
	case errors.Is(lerr, fs.ErrExist):
		if p.f.Truncate(0) != nil {
			p.close()
		}
		return true, errAlreadyHeld
	}
	p.close()
	return false, nil
}

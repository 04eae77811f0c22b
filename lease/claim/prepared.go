package claim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// preparedClaim is a waiter's next claim file, an O_TMPFILE in the claims
// directory made before the claim is free; after a release it is written and
// linked at the claim's path (link's exclusive create, no temp name).
type preparedClaim struct {
	f   *os.File
	dir string
}

// prepareClaim makes the unnamed file in dir, or nil (use the temp file path).
func prepareClaim(dir string) *preparedClaim {
	f, err := safefile.CreateUnnamed(dir, fileMode)
	if err != nil {
		return nil
	}
	return &preparedClaim{f: f, dir: dir}
}

func (p *preparedClaim) close() {
	if p != nil && p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

func (p *preparedClaim) ready() bool { return p != nil && p.f != nil }

// create links content at path through the prepared file. used is false when it
// could not try; else err is nil or errAlreadyHeld (the file kept for a retry).
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

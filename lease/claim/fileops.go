package claim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// readClaimFile reads and parses path: errGoneAway when it does not exist,
// *CorruptedError when it cannot be read or trusted (a dangling symlink,
// a FIFO, a directory or any other non-regular file included: a FIFO is
// opened non-blocking so a planted one cannot hang the reader).
func readClaimFile(path string) (*Record, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(path); lerr == nil {
			return nil, &CorruptedError{Path: path, Reason: "dangling symlink"}
		}
		return nil, errGoneAway
	}
	if err != nil {
		return nil, &CorruptedError{Path: path, Reason: fmt.Sprintf("read failed: %v", err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		what := fmt.Sprintf("not a regular file (%v)", err)
		if err == nil {
			what = fmt.Sprintf("not a regular file (%v)", fi.Mode().Type())
		}
		return nil, &CorruptedError{Path: path, Reason: what}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRecordBytes+1)) // parseRecord refuses more
	if err != nil {
		return nil, &CorruptedError{Path: path, Reason: fmt.Sprintf("read failed: %v", err)}
	}
	rec, reason := parseRecord(b)
	if reason != "" {
		return nil, &CorruptedError{Path: path, Reason: reason}
	}
	return rec, nil
}

var tmpSeq atomic.Uint64

// errAlreadyHeld: the exclusive create lost (the path exists).
var errAlreadyHeld = errors.New("claim: path already exists")

// atomicCreateExclusive publishes content at path only if path does not
// exist: a temp file in the same directory, then link(2) (EEXIST = a
// concurrent winner published first). Readers see no file or a whole one.
// The directory is created on ENOENT and the create retried once.
func atomicCreateExclusive(path string, content []byte) error {
	err := createViaLink(path, content)
	if errors.Is(err, fs.ErrNotExist) {
		if mkErr := os.MkdirAll(filepath.Dir(path), 0o755); mkErr != nil {
			return fmt.Errorf("create claims directory: %w", mkErr)
		}
		err = createViaLink(path, content)
	}
	if errors.Is(err, fs.ErrExist) {
		return errAlreadyHeld
	}
	return err
}

func createViaLink(path string, content []byte) error {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".claim-tmp-%d-%d-%d",
		os.Getpid(), time.Now().UnixNano(), tmpSeq.Add(1)))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(content)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, werr)
	}
	fault.Point("claim.after-temp-write")
	lerr := os.Link(tmp, path)
	fault.Point("claim.after-link")
	os.Remove(tmp)
	if lerr != nil {
		var le *os.LinkError
		if errors.As(lerr, &le) && errors.Is(le.Err, fs.ErrExist) {
			return fs.ErrExist
		}
		if errors.As(lerr, &le) && errors.Is(le.Err, fs.ErrNotExist) {
			return fs.ErrNotExist
		}
	}
	return lerr
}

// atomicReplace replaces path with content: temp file beside it, rename(2).
func atomicReplace(path string, content []byte) error {
	tmp := fmt.Sprintf("%s.tmp.%d.%d", path, os.Getpid(), tmpSeq.Add(1))
	err := os.WriteFile(tmp, content, 0o644)
	fault.Point("claim.replace-after-temp-write")
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// archiveClaim moves a stale claim to .expired/<enc>.<ts_ms>.lock by
// rename, never unlinking it. A missing source is success (another process
// archived it first).
func archiveClaim(path string, tsMs int64) error {
	dir, name := filepath.Split(path)
	stem := strings.TrimSuffix(name, ".lock")
	archive := filepath.Join(dir, expiredSubdir)
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", archive, err)
	}
	err := os.Rename(path, filepath.Join(archive, stem+"."+strconv.FormatInt(tsMs, 10)+".lock"))
	fault.Point("claim.mid-archive")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

package claim

import (
	"crypto/rand"
	"encoding/binary"
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

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/safefile"
	"github.com/leasewrap/leasewrap/lease"
)

// readClaimFile reads and parses path: errGoneAway when missing, *CorruptError for
// anything untrusted (non-regular, never followed); may match errTransientRead.
func readClaimFile(path string) (*Record, error) {
	b, err := readClaimBytes(path)
	if err != nil {
		return nil, err
	}
	return parseClaim(path, b)
}

func parseClaim(path string, b []byte) (*Record, error) {
	rec, reason := parseRecord(b)
	if reason != "" {
		return nil, &CorruptError{Path: path, Reason: reason}
	}
	return rec, nil
}

func readClaimBytes(path string) ([]byte, error) {
	f, err := safefile.Open(path, os.O_RDONLY, 0)
	var ue *safefile.UnsafeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errGoneAway
	case errors.As(err, &ue):
		return nil, &CorruptError{Path: path, Reason: ue.What + "; claims are regular files, and leasewrap neither follows nor reads anything else"}
	case err != nil:
		return nil, readFailed(path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRecordBytes+1)) // parseRecord refuses more
	if err != nil {
		return nil, readFailed(path, err)
	}
	return b, nil
}

// errTransientRead marks a read failure that may pass (EIO, EINTR, ENOMEM,
// EMFILE): renewal retries it.
var errTransientRead = errors.New("claim: transient read failure")

// readError is a failed read: Corrupted, and transient when its cause may pass.
type readError struct {
	*CorruptError
	cause error
}

func (e *readError) Unwrap() []error {
	errs := []error{e.CorruptError, e.cause}
	for _, t := range []error{syscall.EIO, syscall.EINTR, syscall.ENOMEM, syscall.ENFILE, syscall.EMFILE, syscall.ENOBUFS, syscall.EAGAIN} {
		if errors.Is(e.cause, t) {
			return append(errs, errTransientRead)
		}
	}
	return errs
}

func readFailed(path string, err error) error {
	return &readError{&CorruptError{Path: path, Reason: fmt.Sprintf("read failed: %v", err)}, err}
}

var tmpSeq atomic.Uint64

// errAlreadyHeld: the exclusive create lost (the path exists).
var errAlreadyHeld = errors.New("claim: path already exists")

// fileMode is the peers' default file mode before the umask, so a group-shared
// root (umask 002) can append to one events log.
const fileMode = 0o666

// dirMode is the peers' default directory mode before the umask.
const dirMode = 0o777

// atomicCreateExclusive publishes content at path only if absent: temp file plus
// link(2) (EEXIST = a peer won). The directory is created on ENOENT.
func atomicCreateExclusive(path string, content []byte) error {
	err := createViaLink(path, content)
	if errors.Is(err, fs.ErrNotExist) {
		if mkErr := os.MkdirAll(filepath.Dir(path), dirMode); mkErr != nil {
			return fmt.Errorf("create claims directory: %w", mkErr)
		}
		err = createViaLink(path, content)
	}
	if errors.Is(err, fs.ErrExist) {
		return errAlreadyHeld
	}
	return err
}

// createViaLink links a new exclusive temp file ".claim-tmp-<pid>-<ns>-<n>" (the
// seed's pattern) at path; only link's EEXIST reports fs.ErrExist.
func createViaLink(path string, content []byte) error {
	dir := filepath.Dir(path)
	f, tmp, err := safefile.CreateTemp(func(int) (string, error) {
		return filepath.Join(dir, fmt.Sprintf(".claim-tmp-%d-%d-%d",
			os.Getpid(), time.Now().UnixNano(), tmpSeq.Add(1))), nil
	}, os.O_WRONLY, fileMode)
	if errors.Is(err, fs.ErrNotExist) {
		return fs.ErrNotExist
	}
	if err != nil {
		return fmt.Errorf("create temp claim in %s: %w", dir, err)
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
	// link(2) never follows tmp.
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

// atomicReplace renames a new exclusive temp file "<enc>.lock.tmp.<pid>.<n>"
// (random n) over path; rename replaces a planted symlink, never follows it.
func atomicReplace(path string, content []byte) error {
	f, tmp, err := safefile.CreateTemp(func(int) (string, error) {
		var n [8]byte
		if _, err := rand.Read(n[:]); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s.tmp.%d.%d", path, os.Getpid(), binary.LittleEndian.Uint64(n[:])>>1), nil
	}, os.O_WRONLY, fileMode)
	if err != nil {
		return fmt.Errorf("replace %s: create temp: %w", path, err)
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
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

// archiveClaim renames a stale claim to .expired/<enc>.<ts_ms>.lock, never
// unlinking; a missing source is success. A .expired symlink is never followed.
func archiveClaim(path string, tsMs int64) error {
	dir, name := filepath.Split(path)
	stem := strings.TrimSuffix(name, ".lock")
	archive := filepath.Join(dir, expiredSubdir)
	if err := os.MkdirAll(archive, dirMode); err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return notADirectory(archive)
		}
		return fmt.Errorf("create %s: %w", archive, err)
	}
	dfd, err := unix.Open(archive, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return notADirectory(archive)
		}
		return fmt.Errorf("open %s: %w", archive, err)
	}
	defer unix.Close(dfd)
	err = unix.Renameat(unix.AT_FDCWD, path, dfd, stem+"."+strconv.FormatInt(tsMs, 10)+".lock")
	fault.Point("claim.mid-archive")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rename %s into %s: %w", path, archive, err)
	}
	return nil
}

// ArchiveRefusedError reports a .expired entry that is not a directory: the stale
// claim stays. It matches lease.ErrRefused. Path is the entry, What its type.
type ArchiveRefusedError struct {
	Path string
	What string
}

func (e *ArchiveRefusedError) Error() string {
	return fmt.Sprintf("%s is %s, not the directory stale claims are archived into; leasewrap does not write through it and left the stale claim as it was. Check who created it, move it aside (mv %s %s.aside), and run again",
		e.Path, e.What, e.Path, e.Path)
}

// Is makes an *ArchiveRefusedError match lease.ErrRefused and safefile.ErrUnsafe.
func (e *ArchiveRefusedError) Is(target error) bool {
	return target == lease.ErrRefused || target == safefile.ErrUnsafe
}

func notADirectory(path string) error {
	what := "not a directory"
	if fi, err := os.Lstat(path); err == nil {
		what = "a " + safefile.Kind(fi.Mode())
	}
	return &ArchiveRefusedError{Path: path, What: what}
}

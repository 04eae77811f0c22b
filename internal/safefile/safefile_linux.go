// Package safefile opens the files leasewrap creates, appends to or locks in
// directories other users may write (docs/SECURITY.md).
//
// The last path component, the name another user can plant, is never
// followed as a symlink, a FIFO there never blocks, and only a regular file
// is accepted. New files are created with O_EXCL; an existing file opened
// for writing must have exactly one link. Directories above it are followed.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is matched by every refusal of this package.
var ErrUnsafe = errors.New("safefile: refused an unsafe file")

// UnsafeError says which path was refused and what was found there.
type UnsafeError struct {
	Path string
	What string // "is a symlink", "is a named pipe", "has 2 hard links", ...
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s %s; leasewrap does not write through it. Check who created it and remove it by hand if it is not meant to be there", e.Path, e.What)
}

// Unwrap makes an *UnsafeError match ErrUnsafe.
func (e *UnsafeError) Unwrap() error { return ErrUnsafe }

// Kind names a file type for people.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsRegular():
		return "regular file"
	}
	return "special file"
}

// Open opens path with flag (never O_TRUNC) and perm, not following a final
// symlink nor blocking on a FIFO. Only a regular file is returned, with
// exactly one link if opened for writing. A missing file matches fs.ErrNotExist.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&unix.O_TRUNC != 0 {
		return nil, fmt.Errorf("safefile: open %s: O_TRUNC is never safe here", path)
	}
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, OpenError(path, err)
	}
	if err := check(f, path, flag&(unix.O_WRONLY|unix.O_RDWR) != 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenError explains a failed O_NOFOLLOW|O_NONBLOCK open of path (by Open,
// or by a library that opens the file itself, such as gofrs/flock): a
// planted symlink, FIFO or device is an *UnsafeError; anything else is err.
func OpenError(path string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		return &UnsafeError{Path: path, What: "is a symlink"}
	}
	if errors.Is(err, unix.ENXIO) {
		// O_WRONLY|O_NONBLOCK on a FIFO without a reader.
		return &UnsafeError{Path: path, What: "is a named pipe or device"}
	}
	// The kernel may refuse a planted name otherwise (EACCES in a sticky
	// directory): say what is there.
	if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
		return &UnsafeError{Path: path, What: "is a " + Kind(fi.Mode()) + " (" + err.Error() + ")"}
	}
	return err
}

// CheckOpened applies Open's rule to a file a library opened (fi from
// fstat): only a regular file with exactly one link.
func CheckOpened(fi fs.FileInfo, path string) error {
	if !fi.Mode().IsRegular() {
		return &UnsafeError{Path: path, What: "is a " + Kind(fi.Mode()) + ", not a regular file"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
		return &UnsafeError{Path: path, What: fmt.Sprintf("has %d hard links (a file leasewrap writes has one)", st.Nlink)}
	}
	return nil
}

// OpenTrustedLink is Open, except that a final symlink owned by our euid or
// root is followed one level. The link is read through an O_PATH descriptor
// (no swap between check and read) and its target opened with Open.
func OpenTrustedLink(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := Open(path, flag, perm)
	var ue *UnsafeError
	if !errors.As(err, &ue) {
		return f, err
	}
	lfd, lerr := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if lerr != nil {
		return nil, err
	}
	defer unix.Close(lfd)
	var st unix.Stat_t
	if unix.Fstat(lfd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK || (int(st.Uid) != os.Geteuid() && st.Uid != 0) {
		return nil, err
	}
	buf := make([]byte, unix.PathMax)
	n, rerr := unix.Readlinkat(lfd, "", buf)
	if rerr != nil || n <= 0 || n >= len(buf) {
		return nil, err
	}
	target := string(buf[:n])
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return Open(target, flag, perm)
}

func check(f *os.File, path string, writing bool) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if !writing && fi.Mode().IsRegular() {
		return nil
	}
	return CheckOpened(fi, path)
}

// CreateExcl creates path exclusively for writing: anything already there
// matches fs.ErrExist and is left untouched.
func CreateExcl(path string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
}

// tempTries bounds how many names CreateTemp tries.
const tempTries = 16

// CreateTemp creates a new temp file exclusively, trying name(0), name(1),
// …; an existing candidate is left alone. It returns the file and its name.
func CreateTemp(name func(i int) (string, error), flag int, perm fs.FileMode) (*os.File, string, error) {
	var err error
	for i := 0; i < tempTries; i++ {
		p, nerr := name(i)
		if nerr != nil {
			return nil, p, fmt.Errorf("safefile: temp name: %w", nerr)
		}
		var f *os.File
		f, err = os.OpenFile(p, flag|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err == nil {
			return f, p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, p, err
		}
	}
	return nil, "", fmt.Errorf("safefile: %d temp names taken, last: %w", tempTries, err)
}

// RandomHex is n random bytes in lowercase hex, an unpredictable name part.
func RandomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// TooLargeError is a file larger than a reader's bound.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes, more than it may hold; left in place, inspect it", e.Path, e.Limit)
}

// ReadBounded reads the regular file at path as Open would, up to limit
// bytes; a larger file is a *TooLargeError, not a truncated read.
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, limit)
}

// ReadBoundedAt is ReadBounded of name relative to the directory dirfd
// (path names it in errors).
func ReadBoundedAt(dirfd int, name, path string, limit int64) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &UnsafeError{Path: path, What: "is a symlink"}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if err := check(f, path, false); err != nil {
		return nil, err
	}
	return readBounded(f, path, limit)
}

func readBounded(f *os.File, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}

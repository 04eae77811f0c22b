package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CreateUnnamed creates a nameless regular file in dir (O_TMPFILE, read-write)
// that vanishes with its last descriptor unless LinkUnnamed names it. Without
// O_TMPFILE support it fails and the caller uses a named temp file.
func CreateUnnamed(dir string, perm fs.FileMode) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir+"/(unnamed)"), nil
}

// LinkUnnamed names f (from CreateUnnamed) path with link(2)'s semantics: an
// existing entry matches fs.ErrExist. It links through /proc/self/fd, which
// needs no privilege, unlike AT_EMPTY_PATH.
func LinkUnnamed(f *os.File, path string) error {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("link %s: %w", path, fs.ErrExist)
		}
		return &os.LinkError{Op: "link", Old: src, New: path, Err: err}
	}
	return nil
}

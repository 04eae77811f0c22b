package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CreateUnnamed creates a regular file in dir that has no name yet
// (O_TMPFILE), opened read-write: nobody can see, open or plant anything
// at it, and it vanishes with its last descriptor unless LinkUnnamed gives
// it a name. A caller uses it to do a new file's creation before it needs
// the file (while it waits for a lease), leaving only the write and the
// link on the path that counts. A file system without O_TMPFILE fails
// (EOPNOTSUPP, EISDIR on old kernels): the caller creates a named temp
// file instead.
func CreateUnnamed(dir string, perm fs.FileMode) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir+"/(unnamed)"), nil
}

// LinkUnnamed gives f, a file CreateUnnamed made, the name path in the
// same directory: link(2)'s semantics, so an existing entry at path is
// never replaced or followed (an error matching fs.ErrExist). It links
// through /proc/self/fd with AT_SYMLINK_FOLLOW, which needs no privilege
// (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH); without /proc it fails
// and the caller publishes another way.
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

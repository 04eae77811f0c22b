package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// explainPermission adds to a permission error on a path which file or
// directory refused it, to whom, and what to do; other errors pass as is.
func explainPermission(err error) error {
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) || !errors.Is(pe.Err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w; %s", err, permissionHint(pe.Op, pe.Path))
}

// permissionHint explains a permission refused to op on path.
func permissionHint(op, path string) string {
	uid := os.Geteuid()
	if op != "mkdir" {
		if fi, err := os.Stat(path); err == nil {
			return fmt.Sprintf("%s (%s) may not be opened by uid %d: give this user read access to it, or choose another path", path, owner(fi), uid)
		}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Sprintf("directory %s cannot be reached by uid %d: choose a path this user can reach", dir, uid)
	}
	return fmt.Sprintf("directory %s (%s) is not writable by uid %d: choose a path in a directory this user can write, or create %s first with this user as its owner", dir, owner(fi), uid, path)
}

// owner describes fi's owner and mode: "owner uid 0, mode drwxr-xr-x".
func owner(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("owner uid %d, mode %v", st.Uid, fi.Mode())
	}
	return fmt.Sprintf("mode %v", fi.Mode())
}

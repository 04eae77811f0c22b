package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkDirFlag refuses a directory flag (or the variable standing in for
// it) that names something other than a directory: a bad flag, reported
// by the caller as usage before anything is attempted (it was an I/O error, 70, from
// the first mkdir under it). A path that does not exist yet is fine: it
// is created.
func checkDirFlag(flag, path string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s %s: %v", flag, path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s is not a directory; give the directory to use", flag, path)
	}
	return nil
}

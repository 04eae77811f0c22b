package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkDirFlag refuses a directory flag (or its variable) that names
// something other than a directory, as usage; a missing path is created later.
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

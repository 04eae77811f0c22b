package reserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// fileMode is the mode new files are created with before the umask, as
// Rust's OpenOptions does.
const fileMode = 0o666

// openNoFollow opens path without following a final symlink and refuses
// anything but a regular file. O_NONBLOCK keeps a FIFO planted at the path
// from blocking the open; it has no effect on regular files.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, fileMode)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, &RecordError{Path: path, Reason: ErrUnsafePath,
				Detail: "is a symlink; leasewrap does not follow symlinks here. Check who created it, remove it by hand if it is not meant to be there"}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &RecordError{Path: path, Reason: ErrUnsafePath,
			Detail: fmt.Sprintf("is not a regular file (%v); check who created it and remove it by hand", st.Mode().Type())}
	}
	return f, nil
}

// readRecordNoFollow reads a record file without following a symlink.
// It returns os.ErrNotExist (wrapped) when the file is absent, and a
// *RecordError (ErrCorrupt) when it is larger than MaxRecordBytes.
func readRecordNoFollow(path string) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readBounded(f, MaxRecordBytes)
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return nil, &RecordError{Path: path, Reason: ErrCorrupt,
			Detail: err.Error() + "; leasewrap will not read or overwrite it. Inspect the file; if no run uses the key any more, move it away by hand"}
	}
	return b, err
}

// fsyncDir makes a created, renamed or removed entry of dir durable. Best
// effort, as in orchestratectl: a file system that rejects fsync on a
// directory loses durability, not correctness.
func fsyncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// writeTemp writes data to tmp (created or truncated, never through a
// symlink) and fsyncs it.
func writeTemp(tmp string, data []byte) error {
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	return nil
}

// writeRecordExclusive publishes rec at path only if nothing is there: an
// fsynced temp ".tmp-claim-<KeyHash("","",run_id)>" hard-linked into
// place. It reports false when another record won (EEXIST).
func writeRecordExclusive(path string, rec *Record) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return false, fmt.Errorf("mkdir %s: %w", dir, err)
	}
	tmp := filepath.Join(dir, ".tmp-claim-"+KeyHash("", "", rec.RunID))
	defer os.Remove(tmp)
	if err := writeTemp(tmp, rec.Marshal()); err != nil {
		return false, err
	}
	fault.Point("reserve.after-temp-write")
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("link %s to %s: %w", tmp, path, err)
	}
	fsyncDir(dir)
	return true, nil
}

// writeRecordAtomic replaces the record at path: fsynced temp
// ".tmp-write-<name>" renamed over it.
func writeRecordAtomic(path string, rec *Record) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("mkdir %s: %w", dir, err)
	}
	tmp := filepath.Join(dir, ".tmp-write-"+filepath.Base(path))
	defer os.Remove(tmp)
	if err := writeTemp(tmp, rec.Marshal()); err != nil {
		return err
	}
	fault.Point("reserve.replace-after-temp-write")
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	fsyncDir(dir)
	return nil
}

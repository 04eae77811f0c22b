package reserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// fileMode is Rust OpenOptions' creation mode, before the umask.
const fileMode = 0o666

// openNoFollow opens path without following a final symlink, non-blocking and
// never truncating; it refuses non-regular files and, for writing or locking,
// files with more than one link.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := safefile.Open(path, flag, fileMode)
	var ue *safefile.UnsafeError
	if errors.As(err, &ue) {
		return nil, &RecordError{Path: path, Reason: ErrUnsafePath,
			Detail: ue.What + "; leasewrap does not follow or write through it. Check who created it, remove it by hand if it is not meant to be there"}
	}
	return f, err
}

// readRecordNoFollow reads a record without following a symlink, bounded.
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

// fsyncDir makes an entry change in dir durable, best effort as in orchestratectl.
func fsyncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// writeTemp creates path exclusively (no symlink), writes data and fsyncs.
func writeTemp(path string, data []byte) error {
	f, err := safefile.CreateExcl(path, fileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return writeSync(f, path, data)
}

// writeTempNamed writes an fsynced temp file in dir under the seed's name,
// created exclusively; if the name is taken it uses "<name>.<16 random hex>"
// (readers ignore temp names). It returns the name written.
func writeTempNamed(dir, name string, data []byte) (string, error) {
	f, tmp, err := safefile.CreateTemp(func(i int) (string, error) {
		if i == 0 {
			return filepath.Join(dir, name), nil
		}
		suffix, err := safefile.RandomHex(8)
		return filepath.Join(dir, name+"."+suffix), err
	}, os.O_WRONLY, fileMode)
	if err != nil {
		return "", fmt.Errorf("create temp %s in %s: %w", name, dir, err)
	}
	return tmp, writeSync(f, tmp, data)
}

func writeSync(f *os.File, path string, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}

// writeRecordExclusive links an fsynced temp ".tmp-claim-<KeyHash("","",run_id)>"
// at path; false when another record won (EEXIST).
func writeRecordExclusive(path string, rec *Record) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return false, fmt.Errorf("mkdir %s: %w", dir, err)
	}
	tmp, err := writeTempNamed(dir, ".tmp-claim-"+KeyHash("", "", rec.RunID), rec.Marshal())
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
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

// writeRecordAtomic renames an fsynced temp ".tmp-write-<name>" over path.
func writeRecordAtomic(path string, rec *Record) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("mkdir %s: %w", dir, err)
	}
	tmp, err := writeTempNamed(dir, ".tmp-write-"+filepath.Base(path), rec.Marshal())
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
		return err
	}
	fault.Point("reserve.replace-after-temp-write")
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	fsyncDir(dir)
	return nil
}

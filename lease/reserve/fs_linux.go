package reserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// fileMode is the mode new files are created with before the umask, as
// Rust's OpenOptions does.
const fileMode = 0o666

// openNoFollow opens path without following a final symlink and refuses
// anything but a regular file, and, when opened for writing or locking, a
// file with more than one link (a hard link planted to another file).
// O_NONBLOCK keeps a FIFO planted at the path from blocking the open; it
// has no effect on regular files. It never truncates.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := safefile.Open(path, flag, fileMode)
	var ue *safefile.UnsafeError
	if errors.As(err, &ue) {
		return nil, &RecordError{Path: path, Reason: ErrUnsafePath,
			Detail: ue.What + "; leasewrap does not follow or write through it. Check who created it, remove it by hand if it is not meant to be there"}
	}
	return f, err
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

// writeTemp creates path exclusively (never through a symlink, never
// truncating anything already there), writes data and fsyncs it. Used for
// a name in a directory leasewrap has just made (the staging manifest).
func writeTemp(path string, data []byte) error {
	f, err := safefile.CreateExcl(path, fileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return writeSync(f, path, data)
}

// writeTempNamed writes data to a new temp file in dir named name, the
// seed's deterministic name, fsynced. The seed opens that name with
// O_TRUNC (reusing a crash leftover); leasewrap creates it exclusively
// instead, and when the name is taken (a leftover, or something planted:
// a symlink, a hard link to another file, a FIFO) it leaves that entry
// alone and uses "<name>.<16 random hex>" beside it. Readers never look at
// temp names, so peers are unaffected. It returns the name it wrote.
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

// writeRecordExclusive publishes rec at path only if nothing is there: an
// fsynced temp ".tmp-claim-<KeyHash("","",run_id)>" hard-linked into
// place. It reports false when another record won (EEXIST).
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

// writeRecordAtomic replaces the record at path: fsynced temp
// ".tmp-write-<name>" renamed over it (rename replaces whatever is at
// path, a planted symlink included, without following it).
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

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// Bounds of a --metrics-file update.
const (
	// maxMetricsFile bounds the previous textfile read back (MaxNames
	// names take about a fifth of it).
	maxMetricsFile = 1 << 20
	// metricsFileMode is every textfile's mode whatever the umask: the
	// collector (another user) reads it, only its owner writes it.
	metricsFileMode = 0o644
	// metricsLockWait bounds the wait for another leasewrap's update of a
	// file in the same directory (each takes milliseconds).
	metricsLockWait = 10 * time.Second
	metricsLockPoll = 2 * time.Millisecond
)

// writeMetricsFile updates the textfile at path with r, under an exclusive
// flock(2) on its directory so that no count is lost. The previous file is
// carried over only if leasewrap wrote it (readOwnTextfile, first line
// metrics.Marker); anything else is left as it is. The new file is a temp
// (not *.prom) fsynced and renamed over path, then the directory fsynced.
func writeMetricsFile(path string, r metrics.Run) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return metricsDirError(path, dir, err)
	}
	defer d.Close() // releases the lock, after the rename
	if _, err := fdlock.Wait(context.Background(), d, unix.LOCK_EX, metricsLockPoll, metricsLockWait, nil); err != nil {
		if errors.Is(err, fdlock.ErrTimeout) {
			return fmt.Errorf("--metrics-file %s: directory %s stayed locked for %v (leasewrap takes its flock for each update of a file there; who holds it?)", path, dir, metricsLockWait)
		}
		return fmt.Errorf("--metrics-file %s: lock directory %s: %w", path, dir, err)
	}
	prev, err := readOwnTextfile(int(d.Fd()), base, path)
	if err != nil {
		return err
	}
	b, err := metrics.Textfile(prev, r)
	var ce *metrics.CorruptError
	if errors.As(err, &ce) {
		return fmt.Errorf("--metrics-file %s is not a textfile leasewrap wrote (%v); it is left as it is, not updated: name another file, or remove this one if it is yours", path, err)
	}
	if err != nil {
		return fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	// The temp name does not end in .prom: the collector never reads a
	// half-written file.
	f, tmp, err := safefile.CreateTemp(func(int) (string, error) {
		suffix, err := safefile.RandomHex(6)
		return filepath.Join(dir, "."+base+".tmp-"+suffix), err
	}, os.O_WRONLY, metricsFileMode)
	if err != nil {
		return fmt.Errorf("--metrics-file %s: cannot create a file in %s: %w", path, dir, err)
	}
	err = f.Chmod(metricsFileMode) // not the umask's
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path) // replaces a name, never writes through it
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	d.Sync()
	return nil
}

// metricsDirError says what is wrong with a --metrics-file's directory.
func metricsDirError(path, dir string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--metrics-file %s: directory %s does not exist; create it (node_exporter's --collector.textfile.directory), or name a file in one that does", path, dir)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("--metrics-file %s: %s is not a directory", path, dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("--metrics-file %s: directory %s cannot be read by this user; make it readable and writable, or name a file in another directory", path, dir)
	}
	return fmt.Errorf("--metrics-file %s: %w", path, err)
}

// readOwnTextfile reads the previous textfile name in dirfd (nil if none)
// if leasewrap wrote it: a regular file, one link, owned by our euid, not
// group- or other-writable. Anything else is an error and is never replaced.
func readOwnTextfile(dirfd int, name, path string) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("--metrics-file %s is a symlink; leasewrap replaces the file by a rename and never follows a link there: name the file itself (the link's target) instead", path)
	case err != nil:
		return nil, fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	mode := fi.Mode().Perm()
	switch {
	case fi.Mode().IsRegular():
	case fi.IsDir():
		return nil, fmt.Errorf("--metrics-file %s is a directory; name a file in it, e.g. %s", path, filepath.Join(path, "job.prom"))
	case fi.Mode()&fs.ModeDevice != 0:
		return nil, fmt.Errorf("--metrics-file %s is a device, not a file leasewrap can replace; name a regular file, e.g. /var/lib/node_exporter/textfile/job.prom", path)
	default:
		return nil, fmt.Errorf("--metrics-file %s is a %s, not a regular file; it is left as it is: name another file", path, safefile.Kind(fi.Mode()))
	}
	if st.Nlink != 1 {
		return nil, fmt.Errorf("--metrics-file %s has %d hard links (a textfile leasewrap writes has one); it is left as it is: name another file", path, st.Nlink)
	}
	if euid := os.Geteuid(); int(st.Uid) != euid {
		return nil, fmt.Errorf("--metrics-file %s is owned by uid %d, not by this user (uid %d); leasewrap carries over only a file it wrote itself, so it is left as it is: name another file, or remove this one if it is yours", path, st.Uid, euid)
	}
	if mode&0o022 != 0 {
		return nil, fmt.Errorf("--metrics-file %s is writable by others (mode %04o; leasewrap writes %04o), so others may have changed it; it is left as it is: remove it if it is yours", path, mode, metricsFileMode)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMetricsFile+1))
	if err != nil {
		return nil, fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	if len(b) > maxMetricsFile {
		return nil, fmt.Errorf("--metrics-file %s is larger than %d bytes, more than a textfile leasewrap writes ever holds; it is left as it is: name another file", path, maxMetricsFile)
	}
	return b, nil
}

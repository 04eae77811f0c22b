package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/ctxsleep"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// reapSeq makes reap names unique. The mkdir mutexes (<lockfile>.recovery.d,
// events.jsonl.lock.d) are wire protocol shared with the Python
// implementation (fno.mutex): mkdir takes them, an "owner" file inside
// names the holder (host:pid:ns), a mutex older than 120 s by lstat mtime
// is a corpse taken only by atomic rename to a unique reap name, and a
// release removes the directory only when the owner token still matches.
var reapSeq atomic.Uint64

func (c *Claims) ownerToken() string {
	return fmt.Sprintf("%s:%d:%d", c.hostname(), c.selfPID(), time.Now().UnixNano())
}

// ownerMax bounds an owner token file: a token is host:pid:ns, well under
// a hundred bytes. A larger file is corrupt, refused and left in place.
const ownerMax = 4 << 10

// readOwner is lockDir's owner token for display: "" when it cannot be
// read (readOwnerStrict says why).
func readOwner(lockDir string) string {
	tok, _ := readOwnerStrict(lockDir)
	return tok
}

// readOwnerStrict reads lockDir/owner, bounded and without following a
// symlink. A missing or unreadable file is "" (the seed's
// unwrap_or_default: a pre-token corpse); only an oversized one is an
// error.
func readOwnerStrict(lockDir string) (string, error) {
	b, err := safefile.ReadBounded(filepath.Join(lockDir, "owner"), ownerMax)
	var tl *safefile.TooLargeError
	if errors.As(err, &tl) {
		return "", err
	}
	if err != nil {
		return "", nil
	}
	return string(b), nil
}

// errStamp marks a mutex whose owner file could not be written: the
// mutex was removed again, the caller may retry.
var errStamp = errors.New("claims: could not stamp the mutex owner")

// takeDirMutex makes lockDir and stamps a fresh owner token into it. A
// mutex this call made is removed by it again when anything fails after
// the mkdir (ENOSPC writing the owner file, for one), so a failure never
// leaves a mutex nobody recognises as theirs. The owner file is created
// exclusively, relative to the directory just made (opened without
// following a symlink), so nothing planted is written through.
func (c *Claims) takeDirMutex(lockDir string) (string, error) {
	if err := os.Mkdir(lockDir, dirMode); err != nil {
		return "", err
	}
	tok := c.ownerToken()
	if err := c.stampOwner(lockDir, tok); err != nil {
		return "", fmt.Errorf("%w %s: %w", errStamp, lockDir, err)
	}
	return tok, nil
}

// stampOwner writes tok into lockDir/owner; on failure it removes what it
// made (the owner file, then lockDir if it is still the directory it made).
func (c *Claims) stampOwner(lockDir, tok string) (err error) {
	dfd, err := unix.Open(lockDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// rmdir removes only an empty directory: the one just made, unless
		// it was swapped in the instant since (then nothing of value).
		unix.Rmdir(lockDir)
		return fmt.Errorf("open %s: %w", lockDir, err)
	}
	defer unix.Close(dfd)
	var made unix.Stat_t
	if err := unix.Fstat(dfd, &made); err != nil {
		unix.Rmdir(lockDir)
		return fmt.Errorf("stat %s: %w", lockDir, err)
	}
	created := false
	defer func() {
		if err == nil {
			return
		}
		if created {
			unix.Unlinkat(dfd, "owner", 0)
		}
		var now unix.Stat_t
		if unix.Lstat(lockDir, &now) == nil && now.Dev == made.Dev && now.Ino == made.Ino {
			if rerr := os.Remove(lockDir); rerr != nil {
				c.log.Error("claims: could not remove our own mutex after a failed stamp; it blocks the key until it is 120 s old",
					"path", lockDir, "err", rerr)
			}
		}
	}()
	fd, err := unix.Openat(dfd, "owner", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	if err != nil {
		return fmt.Errorf("create %s/owner: %w", lockDir, err)
	}
	created = true
	f := os.NewFile(uintptr(fd), filepath.Join(lockDir, "owner"))
	err = c.writeOwner(f, []byte(tok))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeOwnerFile writes the token (the writeOwner seam).
func writeOwnerFile(f *os.File, tok []byte) error {
	_, err := f.Write(tok)
	return err
}

// stealIfStale renames lockDir away when it is older than the steal age.
// true: retry the mkdir now (corpse gone, or lock already released);
// false: honestly held (or unstattable), wait.
func (c *Claims) stealIfStale(lockDir string) bool {
	fi, err := os.Lstat(lockDir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	age := c.now().Sub(fi.ModTime())
	if age <= staleMutexSteal {
		return false // includes a clock running backwards: never steal
	}
	before, err := readOwnerStrict(lockDir)
	if err != nil {
		c.log.Warn("claims: stale mutex has a corrupt owner file; not stealing it, remove it by hand", "path", lockDir, "err", err)
		return false
	}
	reaped := fmt.Sprintf("%s.reap.%d.%d", lockDir, os.Getpid(), reapSeq.Add(1))
	err = os.Rename(lockDir, reaped)
	switch {
	case err == nil:
		if after, aerr := readOwnerStrict(reaped); aerr != nil || (after != "" && after != before) {
			// A live lock was swapped in between the age check and the
			// rename: put it back and lose properly.
			if rerr := os.Rename(reaped, lockDir); rerr != nil {
				c.log.Error("claims: stole a live mutex and could not restore it", "path", lockDir, "err", rerr)
			}
			return false
		}
		c.log.Warn("claims: stole stale mutex", "path", lockDir, "age_s", int(age.Seconds()))
		removeReaped(reaped, c)
		return true
	case errors.Is(err, fs.ErrNotExist):
		return true
	default:
		c.log.Warn("claims: could not steal stale mutex", "path", lockDir, "err", err)
		return false
	}
}

func removeReaped(path string, c *Claims) {
	if os.Remove(path) == nil {
		return
	}
	if err := os.RemoveAll(path); err != nil {
		c.log.Warn("claims: could not remove reaped mutex", "path", path, "err", err)
	}
}

// acquireDirMutex takes lockDir within timeout, stealing corpses when
// steal is set. A live holder past the deadline is errMutexBusy. A
// permission error (EACCES, EPERM, EROFS) fails at once: it is not a
// holder and waiting will not cure it. Other failures (ENOSPC, EIO, a
// failed owner stamp, whose mutex is removed again) are retried until the
// deadline, then returned.
func (c *Claims) acquireDirMutex(ctx context.Context, lockDir string, timeout time.Duration, steal bool) (string, error) {
	deadline := time.Now().Add(timeout)
	// The seed polls every 100 ms; these mutexes are held for well under a
	// millisecond, so start at 1 ms and double up to that (only the retry
	// timing differs, never the protocol).
	poll := time.Millisecond
	for {
		tok, err := c.takeDirMutex(lockDir)
		if err == nil {
			return tok, nil
		}
		if isPermission(err) {
			return "", err
		}
		if errors.Is(err, fs.ErrExist) {
			if steal && c.stealIfStale(lockDir) {
				continue
			}
			err = fmt.Errorf("%w: %s", errMutexBusy, lockDir)
		}
		if !time.Now().Before(deadline) {
			return "", err
		}
		if ctxsleep.Sleep(ctx, min(poll, time.Until(deadline))) != nil {
			return "", err
		}
		poll = min(poll*2, dirMutexPoll)
	}
}

// errMutexBusy: a live holder kept the mutex past the wait.
var errMutexBusy = errors.New("claims: mutex held by a live peer")

// isPermission reports a failure no wait will cure: no right to write the
// directory, or a read-only file system.
func isPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS)
}

// releaseDirMutex removes lockDir only if token still owns it. The owner
// file is read and removed relative to a descriptor of lockDir (opened
// without following a symlink), and lockDir is removed only while it is
// still that directory: a mutex swapped for a symlink in the meantime
// never removes anything elsewhere.
func (c *Claims) releaseDirMutex(lockDir, token string) {
	dfd, err := unix.Open(lockDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(dfd)
		owner, rerr := safefile.ReadBoundedAt(dfd, "owner", filepath.Join(lockDir, "owner"), ownerMax)
		if rerr == nil && string(owner) == token {
			// unlink(owner) + rmdir is what remove_dir_all ends up doing, in
			// 2 syscalls instead of 11 (rmdir itself, not os.Remove, which
			// tries unlink first); anything else inside falls back to it.
			unix.Unlinkat(dfd, "owner", 0)
			var held, now unix.Stat_t
			if unix.Fstat(dfd, &held) == nil && unix.Lstat(lockDir, &now) == nil && held.Dev == now.Dev && held.Ino == now.Ino {
				if unix.Rmdir(lockDir) != nil {
					os.RemoveAll(lockDir)
				}
			}
			return
		}
	}
	c.log.Warn("claims: mutex no longer owned by us; left intact", "path", lockDir, "token", token)
}

// waitForRelease polls until lockDir is gone, for up to max. The seed
// polls every 20 ms (mutexPoll); a recovery or a release holds the mutex
// well under a millisecond, and a waiter that meets one is usually the
// next holder, so the poll starts at 1 ms and doubles up to mutexPoll
// (only the retry timing differs, never the protocol).
func (c *Claims) waitForRelease(ctx context.Context, lockDir string, max time.Duration) {
	deadline := time.Now().Add(max)
	poll := min(time.Millisecond, c.mutexPoll)
	for {
		if _, err := os.Lstat(lockDir); err != nil {
			return
		}
		if !time.Now().Before(deadline) {
			return
		}
		if ctxsleep.Sleep(ctx, poll) != nil {
			return
		}
		poll = min(poll*2, c.mutexPoll)
	}
}

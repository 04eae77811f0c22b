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

// reapSeq makes reap names unique. The mkdir mutexes are protocol shared with
// fno.mutex: mkdir takes one, "owner" holds host:pid:ns, one older than 120 s
// (lstat mtime) is stolen by rename, and release removes it only if the token
// still matches.
var reapSeq atomic.Uint64

func (c *Claims) ownerToken() string {
	return fmt.Sprintf("%s:%d:%d", c.hostname(), c.selfPID(), time.Now().UnixNano())
}

// ownerMax bounds an owner file; a larger one is corrupt and left in place.
const ownerMax = 4 << 10

func readOwner(lockDir string) string {
	tok, _ := readOwnerStrict(lockDir)
	return tok
}

// readOwnerStrict reads lockDir/owner without following a symlink; missing or
// unreadable is "" (a pre-token corpse), oversized is an error.
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

// errStamp: the owner file could not be written; the mutex was removed again.
var errStamp = errors.New("claims: could not stamp the mutex owner")

// takeDirMutex makes lockDir and stamps a fresh owner token into it (created
// exclusively, nothing followed); a failure removes what it made.
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

// stampOwner writes tok into lockDir/owner, removing what it made on failure.
func (c *Claims) stampOwner(lockDir, tok string) (err error) {
	dfd, err := unix.Open(lockDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// rmdir removes only the empty directory just made.
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

func writeOwnerFile(f *os.File, tok []byte) error {
	_, err := f.Write(tok)
	return err
}

// stealIfStale renames lockDir away when older than the steal age (true: retry).
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
			// A live lock was swapped in since the age check: put it back.
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

// acquireDirMutex takes lockDir within timeout (stealing corpses if steal); a live
// holder past it is errMutexBusy, a permission error fails at once.
func (c *Claims) acquireDirMutex(ctx context.Context, lockDir string, timeout time.Duration, steal bool) (string, error) {
	deadline := time.Now().Add(timeout)
	// Poll from 1 ms, doubling to the seed's 100 ms (timing only, not protocol).
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

// isPermission reports a failure no wait cures (EACCES, EPERM, EROFS).
func isPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS)
}

// releaseDirMutex removes lockDir only if token still owns it, relative to a
// no-follow descriptor: a mutex swapped for a symlink removes nothing elsewhere.
func (c *Claims) releaseDirMutex(lockDir, token string) {
	dfd, err := unix.Open(lockDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(dfd)
		owner, rerr := safefile.ReadBoundedAt(dfd, "owner", filepath.Join(lockDir, "owner"), ownerMax)
		if rerr == nil && string(owner) == token {
			// unlink(owner) + rmdir; anything else inside falls back to RemoveAll.
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

// waitForRelease polls until lockDir is gone, up to max (1 ms doubling to mutexPoll).
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

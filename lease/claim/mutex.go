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
)

// The mkdir mutexes (<lockfile>.recovery.d, events.jsonl.lock.d) are wire
// protocol shared with the Python implementation (fno.mutex): mkdir takes
// them, an "owner" file inside names the holder (host:pid:ns), a mutex
// older than 120 s by lstat mtime is a corpse taken only by atomic rename
// to a unique reap name, and a release removes the directory only when the
// owner token still matches.

var reapSeq atomic.Uint64

func (c *Claims) ownerToken() string {
	return fmt.Sprintf("%s:%d:%d", c.hostname(), c.selfPID(), time.Now().UnixNano())
}

func readOwner(lockDir string) string {
	b, err := os.ReadFile(filepath.Join(lockDir, "owner"))
	if err != nil {
		return ""
	}
	return string(b)
}

// stampOwner writes a fresh token into lockDir/owner and returns it.
func (c *Claims) stampOwner(lockDir string) string {
	tok := c.ownerToken()
	os.WriteFile(filepath.Join(lockDir, "owner"), []byte(tok), 0o644)
	return tok
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
	before := readOwner(lockDir)
	reaped := fmt.Sprintf("%s.reap.%d.%d", lockDir, os.Getpid(), reapSeq.Add(1))
	err = os.Rename(lockDir, reaped)
	switch {
	case err == nil:
		if after := readOwner(reaped); after != "" && after != before {
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
// steal is set. ok is false on timeout (a live holder past the deadline).
func (c *Claims) acquireDirMutex(ctx context.Context, lockDir string, timeout time.Duration, steal bool) (string, bool) {
	deadline := time.Now().Add(timeout)
	// The seed polls every 100 ms; these mutexes are held for well under a
	// millisecond, so start at 1 ms and double up to that (only the retry
	// timing differs, never the protocol).
	poll := time.Millisecond
	for {
		err := os.Mkdir(lockDir, 0o755)
		if err == nil {
			return c.stampOwner(lockDir), true
		}
		if errors.Is(err, fs.ErrExist) && steal && c.stealIfStale(lockDir) {
			continue
		}
		if !time.Now().Before(deadline) {
			return "", false
		}
		if !sleepCtx(ctx, min(poll, time.Until(deadline))) {
			return "", false
		}
		poll = min(poll*2, dirMutexPoll)
	}
}

// releaseDirMutex removes lockDir only if token still owns it.
func (c *Claims) releaseDirMutex(lockDir, token string) {
	if readOwner(lockDir) == token {
		// unlink(owner) + rmdir is what remove_dir_all ends up doing, in 2
		// syscalls instead of 11; anything else inside falls back to it.
		os.Remove(filepath.Join(lockDir, "owner"))
		if os.Remove(lockDir) != nil {
			os.RemoveAll(lockDir)
		}
		return
	}
	c.log.Warn("claims: mutex no longer owned by us; left intact", "path", lockDir, "token", token)
}

// waitForRelease polls (every mutexPoll, up to max) until lockDir is gone.
func (c *Claims) waitForRelease(ctx context.Context, lockDir string, max time.Duration) {
	deadline := time.Now().Add(max)
	for {
		if _, err := os.Lstat(lockDir); err != nil {
			return
		}
		if !time.Now().Before(deadline) {
			return
		}
		if !sleepCtx(ctx, c.mutexPoll) {
			return
		}
	}
}

// sleepCtx sleeps d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/flock"
	"github.com/leasewrap/leasewrap/lease/slots"
)

// flockRunCmd holds a flock(2) on PATH while a command runs.
type flockRunCmd struct {
	Path   string `arg:"" help:"Lock file, created (mode 0666 minus the umask) when missing; its directory must exist. Never a symlink, directory or device." placeholder:"PATH"`
	Shared bool   `short:"s" help:"Take a shared lock (LOCK_SH, flock(1) -s): shared holders run together and exclude exclusive ones."`
	Holder string `help:"Holder identity exported as LEASEWRAP_HOLDER (a flock records none). Default: leasewrap:HOST:PID:RANDOM."`
	flockHabits
	cli.RunFlags
}

func (c *flockRunCmd) Help() string {
	return `Takes the same lock flock(1) takes, flock(2) LOCK_EX on PATH opened
read-only, so leasewrap and flock(1) exclude each other in both directions.
The locked descriptor is inherited by the command (LEASEWRAP_FD): if
leasewrap is killed, the lock stays with the command until it and every
process holding the descriptor have exited. No TTL, nothing to go stale.

flock(1)'s flags mean what they mean there: -n (the default: try once),
-w SECONDS (--wait), -E CODE (--conflict-exit-code), -s and -x:
                flock -n PATH CMD      is  leasewrap flock run -n PATH -- CMD
                flock -w 30 PATH CMD   is  leasewrap flock run -w 30 PATH -- CMD
                flock -E 0 -n PATH CMD is  leasewrap flock run -E 0 -n PATH -- CMD
                flock PATH -c 'CMD'    is  leasewrap flock run PATH -- sh -c 'CMD'
-o, -u and -F are refused (the command holds the lock; leasewrap stays).
Differences: a held lock exits 75 (flock(1): 1); PATH must be a regular file
(a symlink, directory, FIFO, device or second hard link at PATH is refused,
where flock(1) follows or locks it). A waiter blocks in flock(2) as
flock(1) -w does, so it takes the lock the moment the holder closes or
unlocks (flock -u) it; its command is started while it waits, stopped
(ps shows it), and runs only once the lock is its own: a waiter that
gives up kills it unrun.

--slots N allows N holders at once: slot 0 is PATH itself, slot i is PATH.i
(a runner pool: leasewrap flock run /var/lock/build.lock --slots 3 --wait 1h
-- ./build.sh holds build.lock, build.lock.1 or build.lock.2 and exports
LEASEWRAP_SLOT=0, 1 or 2). flock(1) on PATH takes slot 0.

Examples:
  leasewrap flock run /var/lock/backup.lock -- ./backup.sh
  leasewrap -q flock run /var/lock/sync.lock -- /usr/local/bin/sync      # crontab: silent unless it fails
  leasewrap flock run /run/lock/deploy.lock --wait 5m -- ./deploy.sh`
}

func (c *flockRunCmd) Validate() error {
	if err := c.flockHabits.apply(c.Shared, &c.RunFlags); err != nil {
		return err
	}
	return c.RunFlags.Check(0)
}

func (c *flockRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	holder := c.Holder
	if holder == "" {
		holder = cli.DefaultHolder()
	}
	var ls []lease.Locker
	for i := range c.Slots.N() {
		l, err := flock.NewLocker(flock.Config{Path: flockSlotPath(c.Path, i), Shared: c.Shared, Holder: holder})
		if err != nil {
			return fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
		defer l.Close()
		if err := lockFileAccess(l.Key()); err != nil {
			return err
		}
		ls = append(ls, l)
	}
	if len(ls) == 1 {
		return c.Supervise(ctx, c.Config(ls[0], logger))
	}
	l, err := slots.New(ls)
	if err != nil {
		return err
	}
	return c.Supervise(ctx, c.Config(l, logger))
}

// lockFileAccess refuses, before acquiring, a lock file this user may
// neither open nor create, as an *fs.PathError cli.ExitCode explains (70).
func lockFileAccess(path string) error {
	op, target, mode := "open lock file", path, uint32(unix.R_OK)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		op, target, mode = "create lock file", filepath.Dir(path), unix.W_OK|unix.X_OK
	}
	if err := unix.Access(target, mode); errors.Is(err, unix.EACCES) {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

// flockSlotPath is slot i's lock file: PATH for slot 0 (so flock(1) on PATH
// holds slot 0), PATH.i for the others.
func flockSlotPath(path string, i int) string {
	if i == 0 {
		return path
	}
	return path + "." + strconv.Itoa(i)
}

package claim

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
)

// The attempt turn orders this host's leasewrap attempts on one claims
// directory: a Probe takes flock(2) on the directory and, if the claim looks
// free, keeps it until AcquireAnchored returns. Waiters woken by one release
// then start one exec gate (a Go start-up) between them, not one each. It is
// no part of the protocol (the seed takes no flock), and a turn not had
// within turnWait is gone without.
const (
	turnPoll = time.Millisecond
	turnWait = 500 * time.Millisecond
)

func (l *Locker) takeTurn(ctx context.Context) {
	if l.turn != nil {
		return
	}
	path, err := l.claims.Path(l.cfg.Key)
	if err != nil {
		return
	}
	f, err := os.Open(filepath.Dir(path))
	if err != nil {
		return
	}
	if _, err := fdlock.Wait(ctx, f, unix.LOCK_EX, turnPoll, turnWait, nil); err != nil {
		f.Close()
		return
	}
	l.turn = f
}

func (l *Locker) dropTurn() {
	if l.turn != nil {
		l.turn.Close()
		l.turn = nil
	}
}

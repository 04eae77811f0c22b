package reserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// EnvRunID is the variable that tells the child its run id.
const EnvRunID = "LEASEWRAP_RUN_ID"

// reservationLease is a held reservation: the record names runID and ml is
// locked.
type reservationLease struct {
	locker *Locker
	ml     *MaterializerLease
	runID  string
}

var _ lease.Lease = (*reservationLease)(nil)

// RunID is the reserved run id.
func (r *reservationLease) RunID() string { return r.runID }

// Holder is the reserved run id (LEASEWRAP_HOLDER).
func (r *reservationLease) Holder() string { return r.runID }

// Done is nil: loss is found by Renew.
func (r *reservationLease) Done() <-chan struct{} { return nil }

var _ lease.FileHolder = (*reservationLease)(nil)

// File is the locked materializer lease for the child to inherit. Finish
// closes it; nobody else may.
func (r *reservationLease) File() *os.File { return r.ml.File() }

// Env is LEASEWRAP_RUN_ID=<run id>.
func (r *reservationLease) Env() []string { return []string{EnvRunID + "=" + r.runID} }

// TTL is 0: liveness is the materializer flock.
func (r *reservationLease) TTL() time.Duration { return 0 }

// Renew checks that the record still names our run id. A record that is
// gone, names another run or became unreadable (corrupt, newer schema,
// symlink) is ErrLost; an I/O error is transient.
func (r *reservationLease) Renew(ctx context.Context) error {
	st := r.locker.store
	rec, err := st.Lookup(ctx, r.locker.key)
	var re *RecordError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%w: reservation %q: %v", lease.ErrLost, r.locker.cfg.Key, err)
	case err != nil:
		return err
	case rec == nil:
		return fmt.Errorf("%w: reservation %q: %s was removed", lease.ErrLost, r.locker.cfg.Key, st.RecordPath(r.locker.key))
	case rec.RunID != r.runID:
		return fmt.Errorf("%w: reservation %q: %s now names run %s, not ours (%s)", lease.ErrLost, r.locker.cfg.Key, st.RecordPath(r.locker.key), rec.RunID, r.runID)
	}
	return nil
}

// Finish settles the reservation after the child exited: a lost lease is
// released if still ours and nothing is published; exit 0 (or any exit
// with PublishFailures, except one ended by a signal leasewrap forwarded
// unless PublishSignalled) publishes the manifest and keeps the record so
// retries replay; any other exit releases the record (ownership-checked)
// so a retry runs again. The materializer lease is closed last, so nobody
// ever sees "creator dead, unpublished" for a run that succeeded. When
// the record cannot be settled (a failed publish or release), the lease
// file is kept, unlocked once the job's descriptors are gone: the record
// then reads as a dead creator's, which the next run reclaims.
func (r *reservationLease) Finish(ctx context.Context, res lease.Result) error {
	l := r.locker
	var err error
	switch {
	case res.Lost:
		_, _, err = l.store.Release(ctx, l.key, r.runID)
	case res.ExitCode == 0 || (l.cfg.PublishFailures && (res.Forwarded == 0 || l.cfg.PublishSignalled)):
		err = r.publish(ctx, res)
	default:
		_, _, err = l.store.Release(ctx, l.key, r.runID)
	}
	if err != nil {
		// The record could not be settled: keep the materializer lease
		// file and only close our descriptor, so once the job's copies are
		// closed too the record's creator reads dead (its lease file there,
		// unlocked) and the next run reclaims it by the protocol's own
		// rule. Removing the file would leave a creator nobody can verify:
		// the key blocked until someone released it by hand.
		r.ml.Abandon()
	} else {
		// Settled (published, or the record removed): a lease file that
		// could not be removed names no record that needs it; the result
		// stands, so it is not a failure of the run.
		r.ml.Close()
	}
	if err != nil {
		return fmt.Errorf("reservation %q run %s: finish: %w", l.cfg.Key, r.runID, err)
	}
	return nil
}

func (r *reservationLease) publish(ctx context.Context, res lease.Result) error {
	l := r.locker
	rec, err := l.store.Lookup(ctx, l.key)
	if err != nil {
		return err
	}
	if rec == nil || rec.RunID != r.runID {
		return fmt.Errorf("%w: %s no longer names run %s; not publishing", lease.ErrLost, l.store.RecordPath(l.key), r.runID)
	}
	m := &Manifest{
		RunID: r.runID, KeyHash: l.key.Hash(), Key: l.cfg.Key,
		Repo: optional(l.cfg.Repo), Branch: optional(l.cfg.Branch),
		Argv: res.Argv, ExitCode: res.ExitCode,
		StartedAt: res.Started.UTC(), FinishedAt: res.Finished.UTC(),
		Host: l.cfg.Host, Writer: ManifestWriter,
	}
	if m.Argv == nil {
		m.Argv = []string{}
	}
	if res.Signal != 0 {
		s := int(res.Signal)
		m.Signal = &s
	}
	return Publish(l.store.Layout(), m)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// cleanupStale removes the staging directories of reclaimed runs and then
// clears their ids from the record. A failure keeps the obligation in the
// record (a later owner retries it); the run goes ahead either way.
func (r *reservationLease) cleanupStale(ctx context.Context, stale []string) {
	lay := r.locker.store.Layout()
	for _, id := range stale {
		if ValidateRunID(id) != nil {
			return // never turn a strange id into a path to delete
		}
		if err := os.RemoveAll(lay.StagingDir(id)); err != nil {
			return
		}
	}
	fsyncDir(filepath.Dir(lay.StagingDir("x")))
	r.locker.store.FinishStaleCleanup(ctx, r.locker.key, r.runID)
}

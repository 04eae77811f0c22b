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

// reservationLease is a held reservation: the record names runID, ml is locked.
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

// File is the locked materializer lease the child inherits; only Finish closes it.
func (r *reservationLease) File() *os.File { return r.ml.File() }

// Env is LEASEWRAP_RUN_ID=<run id>.
func (r *reservationLease) Env() []string { return []string{EnvRunID + "=" + r.runID} }

// TTL is 0: liveness is the materializer flock.
func (r *reservationLease) TTL() time.Duration { return 0 }

// Renew: a record gone, naming another run or unreadable is ErrLost; I/O is transient.
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

// Finish settles the reservation. A lost lease is released if still ours. Exit 0
// (or any exit with PublishFailures, but a forwarded signal only with
// PublishSignalled) publishes and keeps the record so retries replay; other exits
// release it so a retry runs. The materializer lease closes last, so a success
// never reads "creator dead, unpublished".
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
		// Unsettled: keep the lease file, close only our descriptor, so the creator reads
		// dead once the job's copies close and the next run reclaims it. Removing the
		// file would leave an unverifiable creator, blocking the key.
		r.ml.Abandon()
	} else {
		// Settled: a lease file that could not be removed is not a run failure.
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

// cleanupStale removes reclaimed runs' staging, then their ids from the record.
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

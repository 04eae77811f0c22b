// Package reserve speaks orchestratectl's idempotency-reservation protocol
// (orchestratectl 0.4.0, reading 0.1.7's plain-run-id records too): run a
// job at most once per key and replay its published result.
//
// Layout under the home (ResolveHome):
//
//	idempotency/<hash>                       the record (KeyHash of repo, branch, key)
//	idempotency/<hash>.lock                  per-key flock for each read-decide-write step
//	idempotency/materializers/<run_id>.lease the creator's lifetime flock (inherited by the child)
//	runs/<run_id>/manifest.json              exists = the run is published
//	.creating/runs/<run_id>/                 where a run is built before it is renamed into runs/
//
// A record is compact JSON, byte-identical to orchestratectl's serde output
// (see Record.Marshal). It is created by link(2) of an fsynced temp file
// (exclusive) and replaced by rename(2) of one (Reclaim, FinishStaleCleanup).
//
// Locker decides on an existing record in this order: published → replay
// (*lease.ReplayError); legacy record → refused; creator Live → held
// (*lease.HeldError); creator Unverifiable → refused; creator Dead →
// compare-and-replace the observed record (the old run id moves to
// stale_run_ids) and run.
//
// What is NOT guaranteed:
//   - Locks are advisory flock(2) and records rely on link(2)/rename(2)
//     atomicity on one local file system. NFS, SMB and other network file
//     systems do not give these semantics; do not put the home there.
//     Processes that ignore the protocol are not stopped.
//   - Liveness is the materializer flock. A creator whose lease file is
//     missing, or that names none, is never proved dead: its key stays
//     refused until a person releases it (leasewrap reserve release).
//     Legacy records are never reclaimed either.
//   - Publishing is the rename of the run directory; a manifest that is
//     corrupt still counts as published, and its exit code cannot be
//     replayed.
//   - Unknown fields of a record are read and shown but, as in
//     orchestratectl, not carried over when the record is rewritten.
//   - Durability assumes fsync works; directory fsyncs are best effort.
package reserve

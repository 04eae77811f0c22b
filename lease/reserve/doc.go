// Package reserve speaks orchestratectl's idempotency-reservation protocol
// (0.4.0, reading 0.1.7's plain-run-id records too): run a job at most once per
// key and replay its published result.
//
// Layout under the home (ResolveHome):
//
//	idempotency/<hash>                       the record (KeyHash of repo, branch, key)
//	idempotency/<hash>.lock                  per-key flock for each read-decide-write step
//	idempotency/materializers/<run_id>.lease the creator's lifetime flock (inherited by the child)
//	runs/<run_id>/manifest.json              exists = the run is published
//	.creating/runs/<run_id>/                 where a run is built before it is renamed into runs/
//
// A record is compact JSON, byte-identical to orchestratectl's serde output,
// created by link(2) of an fsynced temp file and replaced by rename(2) of one.
// Locker decides on an existing record in this order: published → replay;
// legacy → refused; creator Live → held; Unverifiable → refused; Dead →
// compare-and-replace (the old run id moves to stale_run_ids) and run.
//
// Not guaranteed:
//   - Locks are advisory; link/rename atomicity needs one local file system
//     (not NFS or SMB).
//   - A creator without a lease file is never proved dead: its key stays
//     refused until released by hand (leasewrap reserve release); legacy
//     records are never reclaimed.
//   - A corrupt manifest still counts as published; its exit code cannot be
//     replayed.
//   - Unknown record fields are not carried over on rewrite.
//   - Durability assumes fsync works; directory fsyncs are best effort.
package reserve

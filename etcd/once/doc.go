// Package once runs a job at most once per key across hosts, on etcd: the
// reservation semantics of `leasewrap reserve run`, in a key layout of its
// own.
//
// Layout: the record of KEY is PREFIX + url.PathEscape(KEY) (so "/" in KEY
// becomes %2F and KEY is one path segment; the default prefix is
// "leasewrap/once/"). Its value is a JSON Record.
//
//   - Claim: a transaction creates the record if it does not exist, in
//     state "running", attached to the run's lease: while the run is in
//     flight the record lives exactly as long as the lease.
//   - Publish: a transaction guarded by the record's create revision (ours)
//     rewrites it in state "done" with the exit code, detached from the
//     lease (a put without a lease): it is durable, kept until removed by
//     `once release KEY --run-id ID` (or etcdctl del).
//   - A later run finds state "done" and replays the exit code without
//     running anything (*lease.ReplayError).
//   - A failure deletes the record (guarded) so a retry runs; with
//     PublishFailures it is published instead.
//   - A lost lease publishes nothing: the record expires with the lease and
//     a retry runs. A result is published only before the fencing deadline,
//     and never when the lease was lost or the fence passed (lease.ErrLost).
//
// What is not guaranteed: exactly once. A run whose wrapper is paused past
// its fence can keep going while a retry runs; the job can check its
// fencing token (LEASEWRAP_FENCE, the record's create revision) where it
// writes.
package once

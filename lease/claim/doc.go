// Package claim is leasewrap's implementation of the fno work-claim
// protocol (fno-agents `claims`, whose Python `fno.claims` is the reference
// implementation): a YAML lock file per key at
// <root>/.fno/claims/<percent-encoded key>.lock whose holder is live while
// its recorded pid runs on this machine and/or its TTL has not expired.
//
// leasewrap is a wire-exact peer: Python and Rust processes read and write
// the same files at the same time. The file is written byte for byte as
// PyYAML's yaml.safe_dump(sort_keys=False) writes it; creation is a temp
// file (or, for a Locker that waited, an unnamed O_TMPFILE made while
// waiting) plus link(2) (EEXIST means held), replacement a temp file plus
// rename(2); stale claims are archived to .expired/, never unlinked; stale
// recovery and renewal serialize on the <lockfile>.recovery.d mkdir mutex
// (corpses older than 120 s stolen by rename); audit events are appended to
// .fno/events.jsonl under the events.jsonl.lock.d mkdir mutex.
//
// Claims performs the verbs (Acquire, Release, Status, Renew, List);
// Locker adapts them to lease.Locker for the supervisor. The YAML is read
// and written by internal/pyyaml (golden and corpus tests).
//
// Readers read at most MaxRecordBytes (1 MiB) and accept collections
// nested at most MaxNesting (128) levels, the Rust peer's serde_yaml
// limit; anything larger or deeper is Corrupted, and the writer refuses
// (ErrInvalid) to produce it. Parsing is linear in the file.
//
// What is NOT guaranteed:
//   - Mutual exclusion is advisory: a process that ignores the protocol is
//     not stopped, and an operator who edits a claim file wins.
//   - Liveness is decided on one machine: a claim from another machine (or
//     another pid namespace) is never Live there; it is protected only by
//     its TTL (Suspect), and a PID-liveness claim from another machine reads
//     Stale and can be reclaimed. Do not share a claims root across hosts
//     without TTLs.
//   - Network file systems (NFS, SMB) may not give link(2), rename(2) and
//     mkdir(2) the atomicity this protocol needs.
//   - Process start times are compared at clock-tick resolution against
//     acquired_at; a pid reused within the same tick is not detected.
//   - The audit log is best effort: an event can be missing (lock timeout,
//     I/O error) while the claim change happened; the claim file is the
//     truth.
//   - A stale claim can be reclaimed between a holder's last Renew and its
//     next; renew well inside the TTL.
//   - Metadata values are JSON-like (mappings with string keys, lists,
//     strings, integers, floats, booleans, null). A YAML timestamp written
//     by a Python peer is kept as its text and written back quoted.
//   - Record fields this package does not know are dropped when it
//     rewrites a record (renewal), as the reference reader does.
package claim

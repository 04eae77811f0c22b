// Package claim implements the fno work-claim protocol (reference: Python
// fno.claims), wire-exact with Python and Rust peers sharing the files: a YAML
// file per key at <root>/.fno/claims/<percent-encoded key>.lock, live while its
// pid runs on this machine and/or its TTL is unexpired.
//
// The file is written as PyYAML's yaml.safe_dump(sort_keys=False) writes it.
// Create is a temp file (or a waiter's O_TMPFILE) plus link(2), EEXIST meaning
// held; replace is temp file plus rename(2); stale claims are archived to
// .expired/, never unlinked. Recovery and renewal serialize on the
// <lockfile>.recovery.d mkdir mutex (corpses older than 120 s stolen by rename);
// audit events go to .fno/events.jsonl under the events.jsonl.lock.d mutex.
// Readers accept at most MaxRecordBytes and MaxNesting levels.
//
// Not guaranteed:
//   - Exclusion is advisory.
//   - Liveness is decided per machine: another host's (or pid namespace's) claim
//     is protected only by its TTL (Suspect); without a TTL it reads Stale. Do not
//     share a root across hosts without TTLs.
//   - NFS/SMB may not give link, rename and mkdir the atomicity needed.
//   - A pid reused within one clock tick of acquired_at is not detected.
//   - The audit log is best effort; the claim file is the truth.
//   - A claim not renewed within its TTL can be reclaimed.
//   - Metadata is JSON-like; a Python peer's YAML timestamp is kept as text.
//   - Unknown record fields are dropped on rewrite, as the reference does.
package claim

// Package session is a rule-exact peer of bcode's session-lease protocol
// (bcode_session): cross-process session ownership registered as owner
// records whose liveness is a flock held on the record itself.
//
// On-disk layout under a root directory R, for a session id SID
// (a lowercase hyphenated UUID):
//
//	R/locks/SID.lock              coordinator: exclusive while registering an
//	                              owner, for a maintenance guard's whole life;
//	                              shared under the write lock
//	R/locks/SID.write.lock        short write critical section (exclusive)
//	R/leases/SID/TOKEN.json       one owner record (schema 3), shared-flocked
//	                              by its owner for the lease's life
//	R/catalog.lock                the seed's own catalog lock; never taken here
//
// TOKEN is "PID-ACQUIRED_AT_MS-SID". A record is written as
// TOKEN.json.tmp-TOKEN (created exclusively), fsynced, locked shared and
// renamed into place, so a published record is always complete and always
// locked by a live owner until that owner exits or releases it.
//
// A schema 3 record is stale when an exclusive try-lock on it succeeds (or
// it vanished), live when that would block; schema 2 records fall back to
// kill(pid, 0); anything else is unverifiable and never pruned. Stale
// records are pruned under the coordinator; one that does not decode fails
// the acquisition and is left untouched.
//
// Two registrations are compatible only when both carry the same storage
// writer epoch and the same daemon instance id (present on the owner); any
// other live owner refuses the registration. A maintenance guard refuses any
// remaining owner at all.
//
// What is NOT guaranteed:
//   - The locks are advisory flock(2) locks: a process that ignores the
//     protocol is not stopped, and nothing here protects the session's data
//     itself.
//   - Liveness holds on one host only. flock(2) on NFS or SMB does not give
//     the semantics this protocol needs; do not put the root on a network
//     file system.
//   - A schema 2 record whose pid was reused stays live until a person
//     removes it.
//   - The coordinator wait is bounded (10 s), not fair: a waiter can lose
//     to a newcomer.
//   - Releasing closes descriptors, it does not LOCK_UN them: a child that
//     inherited the owner record's descriptor keeps the record live (and a
//     migration child that inherited the coordinator keeps maintenance
//     active) until it exits.
//   - Record decoding is at least as strict as the seed's serde decoding: a
//     record in an exotic form the seed accepts (an upper-case session id)
//     may be refused here as undecodable, which fails closed.
package session

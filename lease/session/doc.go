// Package session is a rule-exact peer of bcode's session-lease protocol
// (bcode_session): session owners register owner records whose liveness is a
// flock held on the record itself.
//
// Layout under root R, for a session id SID (lowercase hyphenated UUID):
//
//	R/locks/SID.lock              coordinator: exclusive while registering an
//	                              owner and for a maintenance guard's life;
//	                              shared under the write lock
//	R/locks/SID.write.lock        write critical section (exclusive)
//	R/leases/SID/TOKEN.json       owner record (schema 3), shared-flocked by
//	                              its owner for the lease's life
//	R/catalog.lock                the seed's catalog lock; never taken here
//
// TOKEN is "PID-ACQUIRED_AT_MS-SID". A record is written as
// TOKEN.json.tmp-TOKEN (exclusive create), fsynced, locked shared and renamed
// into place. A schema 3 record is stale when an exclusive try-lock succeeds
// (or it vanished), live when it would block; schema 2 uses kill(pid, 0);
// other schemas are unverifiable, never pruned. Stale records are pruned under
// the coordinator; an undecodable one fails the acquisition, untouched.
// Registrations are compatible only with the same storage writer epoch and
// daemon instance id; a maintenance guard refuses any remaining owner.
//
// Not guaranteed:
//   - The flock(2) locks are advisory and protect no session data.
//   - Liveness holds on one host; do not put the root on NFS or SMB.
//   - A schema 2 record whose pid was reused stays live until removed by hand.
//   - The coordinator wait is bounded (10 s), not fair.
//   - Release closes descriptors, never LOCK_UN: a child holding the record's
//     (or coordinator's) descriptor keeps it live until it exits.
//   - Decoding is at least as strict as the seed's; exotic forms it accepts
//     (an upper-case session id) are refused here, failing closed.
package session

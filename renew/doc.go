// Package renew keeps a lease alive: it calls a renew function on a
// jittered period, retries transient failures, and reports the lease lost
// when the renew function says so — or, for a lease with a TTL, when no
// renewal has succeeded for so long that the lease may already have expired
// for everybody else (self-fencing).
//
// Self-fencing uses the monotonic clock only: a wall-clock jump cannot
// extend it. The deadline is the last successful renewal plus the TTL,
// minus the time the caller needs to stop its work (the kill grace) and a
// safety margin; when it passes, Run returns ErrFenced before anyone else
// can take the lease, provided the clocks of the machine run at the same
// rate (a suspended process resumes late and fences at once, with a
// *FenceError saying how late). Keeper.KillBy, the fence plus the
// caller's grace, is the absolute instant by which the caller's work must
// be over; it moves only when a renewal succeeds, never when a late timer
// fires.
//
// renew knows nothing of lease kinds: it takes functions.
package renew

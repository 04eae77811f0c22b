// Package renew keeps a lease alive: it calls a renew function on a jittered
// period, retries transient failures, and reports the lease lost when the
// function says so or, with a TTL, when no renewal succeeded in time
// (self-fencing).
//
// The fence is the start of the last successful renewal + TTL - kill grace -
// margin, on the monotonic clock only; a process resumed late fences at once
// (a *FenceError says how late). Keeper.KillBy moves only when a renewal
// succeeds. renew knows nothing of lease kinds.
package renew

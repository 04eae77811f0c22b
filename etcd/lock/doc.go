// Package lock is the mutex of `etcdctl lock` and client/v3/concurrency's
// Mutex, implemented directly over the KV, Lease and Watch APIs so that
// leasewrap's renewal is the only thing that keeps the lease alive.
//
// Layout (compatible with etcdctl lock and the server's v3lock service): a
// contender's key is NAME/<lease id in lowercase hex>, with an empty value,
// attached to its lease. The holder is the key under NAME/ with the lowest
// create revision; the others wait, each watching the key created just
// before its own until it is deleted (FIFO, no polling), and then check
// that their own key still exists.
//
// Differences from etcdctl lock, all on the safe side: the lease is renewed
// by one keep-alive per attempt and never after the fence; the holder
// watches its own key, so a deletion or revocation is loss at once; release
// deletes the key only if its create revision is still ours, then revokes
// the lease.
//
// What is not guaranteed: mutual exclusion in time. A holder that is
// paused or partitioned past its fence can still act after a rival took
// the lock; only a store that checks the fencing token (the key's create
// revision, LEASEWRAP_FENCE) rejects its late writes.
package lock

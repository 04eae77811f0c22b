// Package flock is the flock kind: an exclusive (or shared) flock(2) on a file,
// the lock flock(1) takes, so leasewrap and flock(1) exclude each other.
//
// The file is opened as flock(1) opens it (read-only, created 0666 minus the
// umask, never truncated; its contents never read or written, the file never
// removed) and locked LOCK_EX, or LOCK_SH when shared. The command inherits the
// locked descriptor (LEASEWRAP_FD), so a SIGKILLed leasewrap leaves the lock with
// it; the kernel frees it when the last holder of the descriptor exits. There is
// no TTL and nothing on disk to go stale.
//
// A waiter blocks in flock(2) on the same open file description, as flock(1) -w
// does, so a release by close or LOCK_UN (flock -u) grants it at once.
//
// Unlike flock(1), a symlink as the last component is never followed, a FIFO
// never blocks the open, and only a regular file with one link is locked
// (internal/safefile's rules).
//
// Not guaranteed:
//   - flock(2) locks are advisory.
//   - Exclusion holds only for processes seeing the same file on one kernel
//     (containers: a shared mount). NFS emulates flock(2) with byte-range locks;
//     SMB, CIFS and FUSE depend on the server. Across hosts use claim with a TTL
//     or the etcd kinds.
//   - Removing or replacing a held lock file splits the lock, as with flock(1).
//   - A held flock is never lost: Lease.Done is nil and Renew always succeeds.
package flock

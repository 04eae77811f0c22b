// Package flock is the flock kind: an exclusive (or shared) flock(2) on a
// file, the same lock flock(1) takes, so leasewrap and flock(1) exclude
// each other in both directions.
//
// The lock file is opened as flock(1) opens it (read-only, created with
// mode 0666 minus the umask when missing, never truncated) and locked with
// LOCK_EX, or LOCK_SH in shared mode. The locked descriptor is handed to
// the command (lease.FileHolder, LEASEWRAP_FD): the lock lives in that open
// file description, so a leasewrap killed by SIGKILL leaves it with the
// command, and the kernel frees it when the last process holding the
// descriptor exits. There is no TTL and nothing on disk to go stale: the
// file's contents are never read or written, and the file is never
// removed.
//
// A waiter blocks in flock(2) on that same open file description, as
// flock(1) -w does (Locker.Notify): the kernel grants it the lock the
// moment the holder closes its descriptor or unlocks it with LOCK_UN
// (flock -u), which no file event shows, and the next attempt finds the
// lock already on its description (lease.Granter: no attempt is made
// before that, so /proc/locks is read once, for the message). The command
// starts only then, as flock(1)'s does. A waiter that gives up abandons
// the blocked call (Go restarts it after a signal, so it cannot be
// cancelled); a grant that comes after that is released at once by the
// call's own close of its duplicate descriptor.
//
// Unlike flock(1), the last component of the path is never followed when
// it is a symbolic link, a FIFO there never blocks the open, and only a
// regular file with exactly one link is locked (no directory, no device):
// the rules of internal/safefile for every file leasewrap opens in a
// directory others may write.
//
// What is NOT guaranteed:
//   - flock(2) locks are advisory: a process that does not take the lock
//     is not stopped from doing the work.
//   - Exclusion holds between processes that see the same file on the
//     same kernel. Containers share it only through a shared mount of the
//     lock file's directory; other hosts never share it.
//   - Network file systems: on NFS, Linux emulates flock(2) with a
//     byte-range lock that depends on the server's lock manager; on
//     SMB/CIFS and FUSE it depends on the server. Use a local file system,
//     or the claim kind with its TTL, or the etcd kinds across hosts.
//   - Removing or replacing the lock file while it is held splits the
//     lock: the holder keeps its lock on the old, unlinked file while the
//     next process creates and locks a new one (as with flock(1)). Never
//     remove a lock file that may be in use.
//   - A flock cannot be taken away from its holder, so it is never lost
//     while the descriptor is open: Lease.Done is nil and Renew only
//     reports success.
package flock

// Package lease defines the backend-neutral contract between the supervisor
// and the lease kinds leasewrap speaks (claim, reservation, session), plus
// the small pieces they share: sentinel errors, the held/replay error types
// and a directory watcher for waiters.
//
// Each kind lives in its own sub-package (lease/claim, lease/reserve,
// lease/session) and is a wire-exact peer of an existing on-disk protocol.
// A distributed backend (etcd) is meant to be one more implementation of
// Locker and Lease; nothing here assumes a local file system except the
// optional File and Watches hooks.
//
// What is NOT guaranteed: every local kind relies on advisory locks
// (flock(2), link(2)/rename(2) atomicity) and on liveness rules that hold on
// one host. Processes that ignore the protocol are not stopped. Network file
// systems (NFS, SMB) do not give flock(2) or link(2) the semantics these
// protocols need; claims on other hosts are protected only by their TTL.
package lease

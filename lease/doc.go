// Package lease defines the backend-neutral contract between the supervisor
// and the lease kinds leasewrap speaks (claim, reservation, session, and
// the etcd kinds in their own module), plus the sentinel errors and the
// held/replay error types they share.
//
// The core is what every backend can honestly do: a Locker that tries once
// to Acquire, and a Lease with an environment, a TTL, Renew and Finish.
// File hand-over, pid anchoring, probing, the wake-up source while waiting,
// queued waiting, pushed loss and dying with leasewrap are optional
// interfaces. The file-system wake-up source the local kinds share is
// package lease/fswatch.
//
// Each local kind lives in its own sub-package (lease/claim, lease/reserve,
// lease/session) and is a wire-exact peer of an existing on-disk protocol.
//
// What is NOT guaranteed: every local kind relies on advisory locks
// (flock(2), link(2)/rename(2) atomicity) and on liveness rules that hold on
// one host. Processes that ignore the protocol are not stopped. Network file
// systems (NFS, SMB) do not give flock(2) or link(2) the semantics these
// protocols need; claims on other hosts are protected only by their TTL.
package lease

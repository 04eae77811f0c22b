// Package lease defines the backend-neutral contract between the supervisor
// and the lease kinds leasewrap speaks (claim, reservation, session, flock,
// and the etcd, kube and pg kinds in their own executables), plus the
// sentinel errors and the held/replay error types they share.
//
// The core is what every backend can honestly do: a Locker that tries once
// to Acquire, and a Lease that names its holder, adds to the child's
// environment, has a TTL (or none), may push its own loss (Done, nil when
// it cannot), and can be renewed and finished. The capabilities only
// some kinds have are optional interfaces: starting the child anchored
// (Anchor: probe, acquire for the stopped child's pid, then the work that
// waits for the start), the holder known before acquiring (Identity), a
// wake-up source while waiting (Notifier, which may itself wait for the
// grant: Granter) or a queue of its own (Queuer), a descriptor the child
// inherits (FileHolder), the reason a pushed loss happened (LossCause),
// and when the lease was last extended (Confirmed). The file-system
// wake-up source the local kinds share is package internal/fswatch.
//
// Whether the job must die with leasewrap follows from the lease, not from
// a declared capability (DiesWithLeasewrap): a lease only leasewrap's
// renewals keep alive (a TTL, no inherited descriptor, no recorded child
// pid) gets that guard; a lease the child keeps live by itself must not.
//
//	kind         Locker extras                  TTL    Done (push)        FileHolder  dies with leasewrap
//	claim        Anchor (Identity), Notifier    yes/0  nil                no          no (child's pid)
//	reservation  Notifier                       0      nil                yes         no (inherited flock)
//	session      Identity, Notifier             0      nil                yes         no (inherited flock)
//	flock        Identity, Notifier (Granter)   0      nil                yes         no (inherited flock)
//	lock (etcd)  Identity, Queuer               yes    session expiry,    no          yes
//	                                                   key deleted
//	once (etcd)  Identity, Queuer               yes    session expiry,    no          yes
//	                                                   record deleted
//	kube         Identity, Queuer               yes    watch: deleted,    no          yes
//	                                                   overwritten (LossCause)
//
// The etcd leases are also Confirmed and LossCause. A reservation's holder
// is its run id, known only once reserved, hence no Identity. A session's
// migration (--migrate) is a generic pre-step of the supervisor, its lease
// handed over by a function the session verb supplies (supervisor.Step).
//
// What is NOT guaranteed: every local kind relies on advisory locks
// (flock(2), link(2)/rename(2) atomicity) and on liveness rules that hold on
// one host. Processes that ignore the protocol are not stopped. Network file
// systems (NFS, SMB) do not give flock(2) or link(2) the semantics these
// protocols need; claims on other hosts are protected only by their TTL.
package lease

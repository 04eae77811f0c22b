// Package lease defines the backend-neutral contract between the supervisor and
// the lease kinds (claim, reservation, session, flock; etcd, kube and pg in their
// own executables), with their shared sentinel errors and error types.
//
// Every backend can try once to Acquire a Lease that names its holder, adds to
// the child's environment, has a TTL (or none), may push its loss (Done), and is
// renewed and finished. Capabilities only some kinds have are optional
// interfaces: Anchor, Identity, Notifier (Granter), Queuer, FileHolder,
// LossCause, Confirmed. A lease only leasewrap's renewals keep alive makes the
// job die with leasewrap (DiesWithLeasewrap).
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
// The etcd leases are also Confirmed and LossCause. A reservation's holder is its
// run id, known only once reserved, hence no Identity. A session's migration
// hands its lease over through supervisor.Step.
//
// Not guaranteed: the local kinds rely on advisory locks, link/rename atomicity
// and one-host liveness; they do not hold on NFS or SMB, and claims on other
// hosts are protected only by their TTL.
package lease

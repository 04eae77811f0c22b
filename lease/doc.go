// Package lease defines the backend-neutral contract between the supervisor
// and the lease kinds leasewrap speaks (claim, reservation, session, and
// the etcd kinds in their own executable), plus the sentinel errors and the
// held/replay error types they share.
//
// The core is what every backend can honestly do: a Locker that tries once
// to Acquire, and a Lease that names its holder, adds to the child's
// environment, has a TTL (or none), may push its own loss (Done, nil when
// it cannot), and can be renewed and finished. The capabilities only
// some kinds have are optional interfaces: starting the child anchored
// (Anchor: probe, acquire for the stopped child's pid, then the work that
// waits for the start), the holder known before acquiring (Identity), the
// whole hand-over known before acquiring (Foreknown: a waiter's child can
// be started before the lease frees), a wake-up source while waiting
// (Notifier) or a queue of its own (Queuer), a descriptor the child
// inherits (FileHolder), the reason a pushed loss happened (LossCause),
// and when the lease was last extended (Confirmed). The file-system
// wake-up source the local kinds share is package lease/fswatch.
//
// Whether the job must die with leasewrap is not a capability a kind
// declares: it follows from the lease (DiesWithLeasewrap). A lease that
// only leasewrap's renewals keep alive (a TTL, no inherited descriptor, no
// recorded child pid) gets that guard; a lease the child keeps live by
// itself must not, whether or not its kind pushes loss. Pushed loss (Done)
// is not the signal for it: a local kind may learn of a removed record by
// a watch and still be one the child's descriptor keeps live.
//
// The kinds and what they do:
//
//	kind         Locker extras                  TTL    Done (push)        FileHolder  dies with leasewrap
//	claim        Anchor (Identity), Notifier    yes/0  nil                no          no (child's pid)
//	reservation  Notifier                       0      nil                yes         no (inherited flock)
//	session      Identity, Notifier             0      nil                yes         no (inherited flock)
//	flock        Foreknown (Identity), Notifier 0      nil                yes         no (inherited flock)
//	lock (etcd)  Identity, Queuer               yes    session expiry,    no          yes
//	                                                   key deleted
//	once (etcd)  Identity, Queuer               yes    session expiry,    no          yes
//	                                                   record deleted
//	kube         Identity, Queuer               yes    watch: deleted,    no          yes
//	                                                   overwritten;
//	                                                   LossCause says how
//
// The etcd leases (lock, once) are also Confirmed and LossCause: they
// record the start of the keep-alive that last extended them, the ones
// sent while queued included, so a waiter granted the lock starts its job
// without one more renewal when that confirmation leaves the fence rules
// their margin.
//
// (reservation: the holder is the run id, known only once the key is
// reserved or reclaimed, hence no Identity; session maintenance, a second
// Locker of lease/session, has Identity and Notifier too. flock: a plain
// flock(2) on a path, the descriptor inherited; kube: a Kubernetes Lease
// object, renewed, its loss seen by a watch, in module kube.)
//
// A session's migration (`session run --migrate`) is not a capability of
// the contract either: the supervisor runs a generic pre-step whose lease
// is handed over to the command by a function the session verb supplies
// (supervisor.Step.Handover).
//
// Each local kind lives in its own sub-package: lease/claim, lease/reserve
// and lease/session are wire-exact peers of existing on-disk protocols;
// lease/flock takes the lock flock(1) takes.
//
// What is NOT guaranteed: every local kind relies on advisory locks
// (flock(2), link(2)/rename(2) atomicity) and on liveness rules that hold on
// one host. Processes that ignore the protocol are not stopped. Network file
// systems (NFS, SMB) do not give flock(2) or link(2) the semantics these
// protocols need; claims on other hosts are protected only by their TTL.
package lease

// Package slots makes N leases of one kind a semaphore: at most N holders
// at once, each holding one slot, a lease of its own (a flock on its own
// file, an etcd lock of its own name, a Lease object of its own). A
// Locker tries the slots in order, 0 first, and holds the first it gets,
// so holders use the low slots and a slot's number is small enough to name
// a scratch directory: the command learns it as LEASEWRAP_SLOT.
//
// Not guaranteed: which slot a waiter gets, or that waiters are served in
// order (a kind's FIFO queue, such as an etcd lock's, orders the waiters of
// one slot, not of all); a waiter is woken by the supervisor's back-off,
// not by the kind's own notification. Each slot is excluded only as its
// kind excludes: a process that takes slot i's lease by other means
// (flock(1) on its file, etcdctl lock on its name) counts as its holder.
package slots

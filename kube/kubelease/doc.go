// Package kubelease holds a coordination.k8s.io/v1 Lease the way client-go's
// leader election (tools/leaderelection, resourcelock.LeaseLock) does, so
// that leasewrap and every Go controller electing on the same object
// exclude each other, and adds what client-go leaves out: a fencing
// deadline, loss pushed by a watch, and a fencing token.
//
// Protocol (client-go v0.37.2's LeaseLock contract):
//
//   - Acquire: Get; Create when absent (leaseTransitions 0); otherwise, if
//     holderIdentity is non-empty and the lease is live, it is held (our
//     own identity included: a second run with the same identity is a
//     conflict); else Update with the object's resourceVersion, so two
//     racers cannot both win, with leaseTransitions one higher.
//   - Liveness: a lease is live until renewTime + leaseDurationSeconds +
//     Skew (wall clocks of writer and reader differ by less than Skew). A
//     waiter also applies client-go's observed-time rule: a record seen
//     unchanged for leaseDurationSeconds of its own monotonic clock has
//     expired. Either rule frees it.
//   - Renewal: one Update of renewTime per attempt, with the last
//     resourceVersion we wrote as precondition, bounded by a per-attempt
//     timeout. The supervisor fences itself at (start of the last
//     successful renewal) + leaseDurationSeconds - kill grace - margin:
//     an observer that saw that renewal at t >= its start judges the lease
//     expired at t + leaseDurationSeconds at the earliest.
//   - Loss: a watch on the object (field selector metadata.name) closes
//     Done at once when it is deleted or changed to a spec we did not
//     write; a renewal answered 404 or a conflict with a foreign spec is
//     loss too (a 403 is retried until the fence: a restarted API server
//     answers it until its RBAC cache is filled). Lease.LossCause says
//     which: deleted, another holder, another lease duration, a
//     coordinated leader election's spec.strategy, another writer's change.
//   - Coordinated leader election (KEP-4355): a Lease whose spec.strategy
//     is set is refused (lease.ErrRefused, a *CoordinatedError) unless
//     Config.TakeCoordinated; a strategy written on a Lease we hold is
//     loss, and Finish then releases the Lease with the strategy kept.
//   - Release: client-go's ReleaseOnCancel record (holderIdentity "",
//     leaseDurationSeconds 1, both times now, transitions kept), written
//     only while the object is still ours (resourceVersion precondition).
//
// The fencing token (LEASEWRAP_FENCE) is leaseTransitions after our
// acquisition: every leasewrap acquisition by Update raises it, so it
// grows across successive leasewrap holders.
//
// What is not guaranteed: mutual exclusion in time. A holder whose clock
// runs more than Skew away from its rivals', or that is paused past its
// fence, can overlap a successor; only a store that checks the fencing
// token rejects its late writes. The token does not grow when a client-go
// elector re-acquires under its own identity, nor when the object is
// deleted and created again (it restarts at 0).
package kubelease

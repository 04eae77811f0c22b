// Package slots makes N leases of one kind a semaphore: each holder holds one
// slot, a lease of its own. Slots are tried in order from 0, so holders use low
// numbers; the command learns its slot as LEASEWRAP_SLOT.
//
// Not guaranteed: which slot a waiter gets or their order; a waiter is woken by
// back-off, not the kind's notification. A slot is excluded only as its kind
// excludes (flock(1) on its file counts as a holder).
package slots

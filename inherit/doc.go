// Package inherit hands a lease to a child process and lets the child find
// and check it. It holds both halves of the contract:
//
//   - the parent side (Attach) describes the lease in the child's environment
//     and passes its locked descriptor, if any, through exec.Cmd.ExtraFiles
//     (fd 3 onward, FD_CLOEXEC cleared on the child's copy only);
//   - the child side (FromEnv, Lease.Check) reads that description back.
//
// The environment contract:
//
//	LEASEWRAP_KIND     claim | reservation | session | session-maintenance
//	LEASEWRAP_KEY      the lease key (session id for sessions)
//	LEASEWRAP_HOLDER   the holder identity
//	LEASEWRAP_FD       the inherited locked descriptor (kinds that hand one over)
//	LEASEWRAP_PID      the supervising leasewrap's pid
//
// plus kind-specific variables (LEASEWRAP_RUN_ID, LEASEWRAP_SESSION_ID,
// LEASEWRAP_LEASE_TOKEN). Attach removes every inherited LEASEWRAP_*
// variable first, so a wrapper nested in another never shows the outer
// lease's description as its own.
//
// What is NOT guaranteed: a flock(2) lock belongs to the open file
// description, so any process holding a copy of the descriptor keeps the
// lease live — a child that passes LEASEWRAP_FD on to a daemon extends the
// lease to the daemon's life. Closing the descriptor in the child does not
// release the lease while the supervisor still holds its own copy. The
// package knows nothing of lease kinds.
package inherit

// Package inherit hands a lease to a child process (Attach: environment, and the
// locked descriptor via exec.Cmd.ExtraFiles from fd 3) and lets the child read
// and check it (FromEnv, Lease.Check). The environment contract:
//
//	LEASEWRAP_KIND     claim | reservation | session | session-maintenance
//	LEASEWRAP_KEY      the lease key (session id for sessions)
//	LEASEWRAP_HOLDER   the holder identity
//	LEASEWRAP_FD       the inherited locked descriptor (kinds that hand one over)
//	LEASEWRAP_PID      the supervising leasewrap's pid
//
// plus kind-specific variables (LEASEWRAP_RUN_ID, LEASEWRAP_SESSION_ID,
// LEASEWRAP_LEASE_TOKEN). Attach first drops inherited LEASEWRAP_* variables, so
// a nested wrapper never shows the outer lease.
//
// Not guaranteed: a flock belongs to the open file description, so any process
// holding a copy of LEASEWRAP_FD (a daemon it was passed to) keeps the lease
// live, and the child closing it releases nothing while the supervisor holds its
// copy.
package inherit

// Package supervisor runs one command under one lease. It is generic over
// lease.Locker: it takes the lease (waiting if asked), starts the child
// with the lease handed over, keeps the lease alive, forwards signals,
// stops the child if the lease is lost, and settles the lease when the
// child exits.
//
// Every goroutine is an oklog/run actor, with two documented exceptions: a
// renewal call the fence abandoned (it may be stuck in the kernel), and the
// thread holder of an ephemeral lease's child (Pdeathsig). The acquisition
// phase is one group (the acquire loop and a signal watcher, so
// SIGINT/SIGTERM while waiting abort cleanly); the supervision phase is
// another (the reaper, the signal forwarder, the renewer and, for kinds
// that push it, a loss watcher). Losing the lease is an actor returning an
// error, which interrupts the reaper actor: SIGTERM to every process of
// the job, SIGKILL after the kill grace.
//
// The job (Config.Job, jobform_linux.go) is a cgroup v2 of its own where
// one can be created (the child is born in it with CLONE_INTO_CGROUP;
// setsid and double forks stay in it; SIGKILL is cgroup.kill), else the
// child's process group. The lease is settled only once no live member of
// the job is left: leftovers of a child that exited get SIGTERM, then
// SIGKILL after the kill grace (Config.LeaveStrays opts out). A nested
// supervisor joins an outer process-group job (JobEnv) and nests its
// cgroup in an outer cgroup job.
//
// Fencing. The renewer's fencing deadline (renew.Keeper) is a timer of its
// own; a renewal that never returns cannot postpone it. A child that ended
// before the fence was noticed is settled with Result.PastFence, which the
// kind accepts only if the lease is provably still its own.
//
// Anchoring. Kinds whose liveness is a recorded pid (claims) must record
// the pid of the process that does the work, from its birth, so that a
// SIGKILL of leasewrap does not leave the lease looking dead while the work
// goes on. The child is started stopped before its first instruction — by
// ptrace (PTRACE_TRACEME, stopped at execve, PTRACE_O_EXITKILL so it dies
// if leasewrap dies before releasing it), or, where ptrace is not allowed
// or would drop set-user-ID privileges, by an exec gate (leasewrap re-execs
// itself, waits on a pipe, and execs the command in place once the lease is
// recorded). The lease is acquired with the child's pid and only then is
// the child let go; if acquisition fails the command never runs.
//
// What is NOT guaranteed: the lease is advisory; processes that do not
// speak the protocol are not stopped. A child that ignores SIGTERM is
// killed after the grace; in the process-group form descendants that left
// its group (setsid, setpgid) are not, and in the cgroup form a process
// privileged to write elsewhere in the cgroup tree can move itself out.
// Across hosts, only a TTL protects a lease (liveness checks are
// local).
package supervisor

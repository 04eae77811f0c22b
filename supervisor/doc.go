// Package supervisor runs one command under one lease. It is generic over
// lease.Locker: it takes the lease (waiting if asked), starts the child
// with the lease handed over, keeps the lease alive, forwards signals,
// stops the child if the lease is lost, and settles the lease when the
// child exits.
//
// Run(ctx, Config) returns a Result saying what happened: the command ran
// (Ran, with its status), the work was already done (Replayed, with the
// recorded status), the lease was held or not acquired within the wait
// (Conflict), lost while the job ran (Lost), a signal stopped the wait
// (Aborted), or the pre-step failed (PreStepFailed). Its error is for
// failures only. Config is plain data; the running state (the signal
// channels, the terminal) belongs to an unexported runner. Config.OnEvent
// reports the run's events (waiting, acquired, renewed, started, lost,
// finished) to metrics and health checks.
//
// Shape of a run. Acquisition is an oklog/run group of two actors: the
// attempt loop (which blocks in the kind's I/O) and a watcher of the
// run's signal channel, so SIGINT/SIGTERM while waiting abort cleanly.
// Supervision is a group of two more: the keeper (renew.Keeper), which
// renews and whose fencing deadline is a timer of its own that no renewal
// can postpone, and the loop, which owns the job. The loop reads top to
// bottom like tini's: one select over the child's exit (SIGCHLD), the
// signals to forward, the lease's loss (the keeper's error, which ends the
// loop's context with the loss as its cause, and the lease's own
// Lease.Done), the time limit (Config.Timeout) and the kill deadline.
// Losing the lease stops the job: the stop signal (Config.StopSignal,
// SIGTERM by default) to every process of the job, SIGKILL after the kill
// grace (at once with a grace of 0), and for a lease with a TTL no later
// than the last confirmed renewal's start + TTL - margin: an absolute
// instant, armed for the whole run, that a supervisor waking from a stall
// acts on at once instead of granting a fresh grace (stop.go). The time
// limit stops the job the same way, the lease then settled normally. Three
// goroutines are not actors, by design: a renewal and a settle the
// deadline abandoned (internal/abandon; either may be stuck in the
// kernel), and the thread holder of the child of a lease that dies with
// leasewrap (Pdeathsig).
//
// The job (Config.Job, jobform_linux.go) is a cgroup v2 of its own where
// one can be created (the child is born in it with CLONE_INTO_CGROUP;
// setsid and double forks stay in it; SIGKILL is cgroup.kill), else the
// child's process group. The lease is settled only once no live member of
// the job is left: leftovers of a child that exited get the stop signal,
// then SIGKILL after the kill grace (Config.LeaveStrays opts out). One log line
// names them: how many, and the first few. A nested supervisor joins an
// outer process-group job (JobEnv) and nests its cgroup in an outer
// cgroup job.
//
// Fencing. A child that ended before the fence was noticed is settled with
// lease.Result.PastFence, which the kind accepts only if the lease is
// provably still its own. Settling is bounded like the fence: Finish runs
// under a deadline (FinishTimeout, and for a lease with a TTL no later
// than its expiry) and is abandoned if it has not returned by then; after
// a loss or past the fence that is a loss (exit 76), never a hang.
//
// Shutdowns. A child ended by a terminating signal leasewrap passed on
// (SIGTERM, SIGINT, SIGHUP, SIGQUIT from outside) is reported to Finish in
// lease.Result.Forwarded, so a kind that publishes results does not record
// a shutdown as the key's permanent outcome.
//
// Anchoring. Kinds whose liveness is a recorded pid (claims,
// lease.Anchor) must record the pid of the process that does the work,
// from its birth. The child is started behind an exec gate (leasewrap
// re-execs itself, waits on a pipe, and execs the command in place once
// the lease is recorded); if acquisition fails the command never runs. A
// waiter has no child while the lease is held; a flock waiter blocks in
// flock(2) (lease.Granter) and then starts its job, as flock(1) does.
//
// A lease that only leasewrap keeps alive (lease.DiesWithLeasewrap: a TTL,
// no inherited descriptor, no recorded pid — an etcd session) makes the
// job die with leasewrap: the child has a parent-death signal and a guard
// process kills the rest of its job (its cgroup, or its group) if
// leasewrap dies.
//
// What is NOT guaranteed: the lease is advisory; processes that do not
// speak the protocol are not stopped. A child that ignores the stop
// signal is killed after the grace; in the process-group form descendants that left
// its group (setsid, setpgid) are not, and in the cgroup form a process
// privileged to write elsewhere in the cgroup tree can move itself out.
// Across hosts, only a TTL protects a lease
// (liveness checks are local).
package supervisor

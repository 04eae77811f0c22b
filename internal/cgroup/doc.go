// Package cgroup holds the cgroup v2 mechanics of leasewrap's strict job
// form: one cgroup per job, the child born inside it (CLONE_INTO_CGROUP),
// waited for (cgroup.events), killed (cgroup.kill) and removed; leftovers
// swept (Sweep); pids limits read (PidsRoom) and kept (KeepPids).
// A process leaves a cgroup only by a write to another's cgroup.procs,
// never by setsid, setpgid or a double fork.
//
// Not guaranteed: a cgroup is created only where this process may write
// (root, or a delegated subtree), and never in an undelegated systemd unit;
// kernels before 5.14 (no cgroup.kill) are refused; a privileged process in
// the job can still move itself out. The package imports nothing of the product.
package cgroup

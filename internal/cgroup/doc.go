// Package cgroup holds the cgroup v2 mechanics of leasewrap's strict job
// form: find the v2 hierarchy and this process's place in it, decide
// whether a child cgroup may be created there, create one per job, have a
// child born inside it (CLONE_INTO_CGROUP through
// syscall.SysProcAttr.CgroupFD), list its members, wait for it to empty
// (cgroup.events, woken by poll(2)), kill it (cgroup.kill) and remove it;
// sweep what SIGKILLed creators left (Sweep); and read the pids limits
// that apply to this process (PidsLimited, v2 and v1), keeping room for
// the creator under them where the job cgroup has a pids.max (KeepPids).
//
// A process cannot leave a cgroup by setsid(2), setpgid(2) or a double
// fork; only a write to another cgroup's cgroup.procs moves it, which
// needs write access to the common ancestor (root, or the owner of a
// delegated subtree).
//
// What is not guaranteed:
//   - a cgroup can be created only where this process may write: as root,
//     or in a subtree delegated to its user (systemd Delegate=yes, a
//     container runtime that delegates its cgroup namespace). Elsewhere
//     Parent says why not, and the caller falls back;
//   - under systemd, a unit without Delegate=yes is systemd's to manage:
//     Parent refuses it even as root (see Parent);
//   - kernels before 5.14 have no cgroup.kill; Parent refuses them, so a
//     job cgroup can always be killed at once (CLONE_INTO_CGROUP needs 5.7);
//   - a privileged process inside the job can still move itself out by
//     writing its pid elsewhere: the cgroup contains what cooperates or
//     lacks the privilege, not a hostile root.
//
// The package imports nothing of the product.
package cgroup

// Package supervisor runs one command under one lease: it takes the lease
// (waiting if asked), starts the command with the lease handed over, keeps
// the lease alive, forwards signals, stops the job if the lease is lost,
// and settles the lease when the job is over. Run(ctx, Config) returns a
// Result; its error is for failures only.
//
// The files follow a run, each helper below its users:
//
//	config.go      Config, its checks and defaults; result.go: Result, Event
//	run.go         Run → runner.run: splay, acquire, runJob (or runPre first)
//	acquire.go     splay, the attempt loop (signals abort it), attempt, startUnder
//	resolve_linux  Resolve: the command's path and 126/127, before any lease
//	start_linux    the child: start (plain, gated, guarded), signal, reap
//	gate_linux     the exec gate, both halves; guard_linux: the job guard
//	job_linux      the job's form (jobForm): its own cgroup or the child's group
//	limits_linux   threads reserved and oom_score_adj where limits apply
//	supervise.go   supervise: the keeper beside the loop (one select)
//	stop.go        the stopper: stop signal, SIGKILL at grace or fence
//	settle.go      settle: Finish under its deadline; hook.go: on-start/on-exit
//
// Glossary:
//
//	job      the command and every process it starts, held by a cgroup of
//	         its own or the child's process group (jobForm)
//	gate     leasewrap re-executed, holding an anchored command's pid until
//	         the lease names it, then exec'ing the command in place
//	guard    a helper process that kills the job if leasewrap dies
//	fence    the instant (last renewal's start + TTL - margin) past which
//	         the job must not run
//	anchored a kind that records the job's pid (lease.Anchor): claims
//
// A waiter has no child process while the lease is held; a flock waiter
// blocks in flock(2) (lease.Granter) and starts its job after the grant.
// The same code runs on every architecture, under a tracer and without.
//
// What is NOT guaranteed: the lease is advisory; processes that do not
// speak the protocol are not stopped. A child that ignores the stop signal
// is killed after the grace; in the process-group form descendants that
// left its group (setsid) are not, and in the cgroup form a process
// privileged to write elsewhere in the cgroup tree can move itself out.
// Across hosts, only a TTL protects a lease (liveness checks are local).
package supervisor

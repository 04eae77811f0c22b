// Command elector is the kube kind's test peer: client-go's own leader
// election (tools/leaderelection, resourcelock.LeaseLock, v0.37.2) in a
// process of its own, and the fenced test job that leasewrap-kube wraps.
// Tests and the benchmark build it (kubetest.Build) and run it:
//
//	elector lead --kubeconfig K --namespace NS --name LEASE --identity ID [flags]
//	elector job
//
// lead runs one election. It prints one JSON line (Event) per callback on
// standard output: "started-leading", "stopped-leading" (only after
// started-leading), "new-leader", and "exit" last. SIGTERM or SIGINT
// cancels it; with --release-on-cancel (the default) a leader then writes
// client-go's release record before it exits. --hold D stops leading on its
// own after D. With --job-log set, a leader runs the fenced job (see job.go)
// in-process while it leads, its fence read from the Lease's
// leaseTransitions.
//
// job is the child leasewrap-kube runs: the fenced write of job.go with
// LEASEWRAP_FENCE as its fence, configured by the KUBETEST_JOB_*
// environment.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: elector lead|job ...")
		os.Exit(64)
	}
	switch os.Args[1] {
	case "lead":
		os.Exit(lead(os.Args[2:]))
	case "job":
		os.Exit(jobMain())
	default:
		fmt.Fprintf(os.Stderr, "elector: unknown mode %q (want lead or job)\n", os.Args[1])
		os.Exit(64)
	}
}

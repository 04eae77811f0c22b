// Package fault holds leasewrap's named crash points.
//
// Point marks a step that writes or decides. In the release build it is an
// empty function the compiler inlines away: no environment variable, file
// or flag can make a release binary crash at a point. Built with the tag
// leasewrap_faults (go build -tags leasewrap_faults), Point kills its own
// process with SIGKILL, so no deferred clean-up, no atexit and no flush
// runs, when $LEASEWRAP_FAULT names it:
//
//	LEASEWRAP_FAULT=claim.after-link            the first hit
//	LEASEWRAP_FAULT=claim.mid-renew@3           the third hit
//	LEASEWRAP_FAULT=a.b,c.d@2                   either
//
// The reliability battery (reliability/) drives every point for every
// lease kind and checks what the crash left behind.
//
// Not guaranteed: a point fires in the process that reaches it; the exec
// gate and a wrapped command never hit one. Hit counts are per process.
package fault

// Env names the variable that selects the points to fire.
const Env = "LEASEWRAP_FAULT"

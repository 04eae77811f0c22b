// Package fault holds leasewrap's named crash points.
//
// Point marks a step that writes or decides. In a release build it is an
// empty inlined function; built with -tags leasewrap_faults it SIGKILLs its
// own process (no clean-up runs) when $LEASEWRAP_FAULT names it:
//
//	LEASEWRAP_FAULT=claim.after-link            the first hit
//	LEASEWRAP_FAULT=claim.mid-renew@3           the third hit
//	LEASEWRAP_FAULT=a.b,c.d@2                   either
//
// Not guaranteed: a point fires in the process that reaches it; the exec
// gate and a wrapped command never hit one. Hit counts are per process.
package fault

// Env names the variable that selects the points to fire.
const Env = "LEASEWRAP_FAULT"

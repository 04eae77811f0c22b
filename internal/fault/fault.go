//go:build !leasewrap_faults

package fault

// Enabled reports whether this binary was built with crash points.
const Enabled = false

// Point does nothing in the release build.
func Point(name string) {}

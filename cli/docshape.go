package cli

// RunVerbShape is a run verb with only the shared RunFlags: the sibling
// executables' man page and completion descriptions name those flags once
// through it, so a new run flag does not make them stale.
type RunVerbShape struct {
	Run struct {
		RunFlags
	} `cmd:""`
}

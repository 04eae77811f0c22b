package cli

// RunVerbShape is a command line of one run verb holding nothing but the
// flags every run verb of every leasewrap executable shares (RunFlags).
// The descriptions the sibling executables keep for leasewrap's man pages
// and completions leave those flags out and name them once, through this
// shape (internal/kongdoc), so that a new run flag does not make them stale.
type RunVerbShape struct {
	Run struct {
		RunFlags
	} `cmd:""`
}

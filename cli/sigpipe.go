package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// CatchSIGPIPE keeps a broken stderr (a log shipper that died, `2>&1 |
// true`) from killing leasewrap: a failed log write must never stop
// supervision, or the child runs on unsupervised and its result is never
// published. SIGPIPE is caught, not ignored, so the child does not inherit
// an ignored SIGPIPE (caught signals are reset to their default at exec);
// leasewrap's own writes then fail with EPIPE, which logging discards.
func CatchSIGPIPE() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

package cli

import (
	"github.com/leasewrap/leasewrap/internal/memtrim"
	"github.com/leasewrap/leasewrap/supervisor"
)

// TrimWhenStarted makes a sidecar that holds a lease for a long time (the
// etcd and kube kinds) keep less resident: once the command runs and the
// process settles into renewing, the free heap is returned and the
// start-up's mappings of the executable are dropped (memtrim.Idle). It
// chains cfg.OnEvent. The local kinds' short runs do not pay for it.
func TrimWhenStarted(cfg *supervisor.Config) {
	prev := cfg.OnEvent
	cfg.OnEvent = func(ev supervisor.Event) {
		if prev != nil {
			prev(ev)
		}
		if ev.Type == supervisor.EventStarted {
			memtrim.Idle()
		}
	}
}

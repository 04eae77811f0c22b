package cli

import (
	"github.com/leasewrap/leasewrap/internal/memtrim"
	"github.com/leasewrap/leasewrap/supervisor"
)

// TrimWhenStarted chains cfg.OnEvent so that a long-lived sidecar (etcd,
// kube) trims its memory once the command runs (memtrim.Idle).
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

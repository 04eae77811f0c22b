package supervisor

import "time"

// EventType names what an Event reports.
type EventType uint8

const (
	EventWaiting  EventType = iota + 1 // lease held by another; Holder (if known), Err = the contention error
	EventAcquired                      // Holder, Fence (monotonic deadline; zero for a lease without TTL)
	EventRenewed                       // Latency of the attempt; Err nil on success, else the error; Fence = deadline now in force
	EventStarted                       // PID of the child
	EventLost                          // Err = why
	EventFinished                      // the lease was settled (or failed to settle: Err)
	EventSplay                         // the start is delayed by Latency (--splay) before the first attempt
)

var eventNames = [...]string{EventWaiting: "waiting", EventAcquired: "acquired", EventRenewed: "renewed",
	EventStarted: "started", EventLost: "lost", EventFinished: "finished",
	EventSplay: "splay"}

func (t EventType) String() string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return "unknown"
}

// Event is one thing that happened to a run's lease or job, for
// Config.OnEvent.
type Event struct {
	Type    EventType
	Time    time.Time // wall clock
	Holder  string
	PID     int
	Latency time.Duration
	Fence   time.Time
	Err     error
}

// emit passes e to the configured hook, if any, stamped with the time.
func (r *runner) emit(e Event) {
	if r.cfg.OnEvent == nil {
		return
	}
	e.Time = time.Now().Round(0) // wall clock only
	r.cfg.OnEvent(e)
}

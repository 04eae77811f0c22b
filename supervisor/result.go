package supervisor

import (
	"errors"
	"syscall"
	"time"
)

// Outcome is what a run came to.
type Outcome uint8

const (
	// Ran: the command ran and exited, and its lease was settled.
	Ran Outcome = iota + 1
	// Replayed: the work was already done; ExitCode is the recorded status.
	Replayed
	// Conflict: the lease is held by another, or was not acquired within
	// Config.Wait (Cause matches lease.ErrHeld or ErrWaitTimeout).
	Conflict
	// Lost: the lease was lost while the job ran, or could not be proven ours
	// when settled (Cause matches lease.ErrLost).
	Lost
	// Aborted: a signal (Signal) stopped leasewrap before the command started.
	Aborted
	// PreStepFailed: the pre-step exited with ExitCode, not 0; nothing else ran.
	PreStepFailed
	// TimedOut: the command ran past Config.Timeout and its job was stopped.
	TimedOut
)

var outcomeNames = [...]string{Ran: "ran", Replayed: "replayed", Conflict: "conflict", Lost: "lost", Aborted: "aborted", PreStepFailed: "pre-step failed", TimedOut: "timed out"}

func (o Outcome) String() string { return nameOf(outcomeNames[:], int(o)) }

// Result is what happened in a run; Run's error is for failures only.
type Result struct {
	Outcome Outcome
	// ExitCode is the command's status (128+N for death by signal N), the
	// recorded one (Replayed) or the pre-step's (PreStepFailed).
	ExitCode int
	// Signal killed the command, or stopped leasewrap while it waited (Aborted).
	Signal syscall.Signal
	// Holder is this run's holder once acquired, else the other one if known.
	Holder string
	// PID is the command's pid (Ran, Lost, TimedOut); 0 if it never started.
	PID int
	// Cause is why the command did not run to its own end (nil for Ran).
	Cause error
	// Waited is how long acquiring took, Runtime how long the command ran,
	// Splayed how long Config.Splay delayed the start.
	Waited, Runtime, Splayed time.Duration
}

// ErrWaitTimeout is the Cause of a Conflict after a wait ran out.
var ErrWaitTimeout = errors.New("supervisor: lease not acquired within --wait")

// ErrTimeout is the Cause of a TimedOut run.
var ErrTimeout = errors.New("supervisor: the command ran past --timeout")

// ErrStart marks a command that could not start; its lease was released.
var ErrStart = errors.New("supervisor: cannot start the command")

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

func (t EventType) String() string { return nameOf(eventNames[:], int(t)) }

func nameOf(names []string, i int) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	return "unknown"
}

// Event is one thing that happened to a run's lease or job.
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

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
	// ExitCode is its status.
	Ran Outcome = iota + 1
	// Replayed: the work behind the key was already done; nothing ran.
	// ExitCode is the recorded status, Cause the *lease.ReplayError.
	Replayed
	// Conflict: the lease is held by another (tried once), or was not
	// acquired within Config.Wait; nothing ran. Cause says by whom
	// (matches lease.ErrHeld, and ErrWaitTimeout after a wait).
	Conflict
	// Lost: the lease was lost while the job ran and the job was stopped, or
	// it could no longer be proven ours when settled. Cause matches
	// lease.ErrLost.
	Lost
	// Aborted: a signal (Signal) stopped leasewrap before the command
	// started; nothing ran and nothing was left behind.
	Aborted
	// PreStepFailed: the pre-step (Config.Pre) exited with ExitCode, not
	// 0; the command never ran and its lease was not taken.
	PreStepFailed
	// TimedOut: the command ran past Config.Timeout and its job was stopped;
	// ExitCode is its own status (leasewrap exits 124, as timeout(1) does).
	TimedOut
)

var outcomeNames = [...]string{Ran: "ran", Replayed: "replayed", Conflict: "conflict", Lost: "lost", Aborted: "aborted", PreStepFailed: "pre-step failed", TimedOut: "timed out"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return "unknown"
}

// Result is what happened in a run. Run returns it with a nil error for
// every outcome; an error is a failure (usage, a command that cannot run,
// I/O, a record refused, a lease that could not be settled).
type Result struct {
	Outcome Outcome
	// ExitCode is the command's status (128+N for death by signal N) for
	// Ran, Lost and TimedOut (once it was stopped), the recorded status for
	// Replayed, the pre-step's status for PreStepFailed; 0 otherwise.
	ExitCode int
	// Signal is the signal that killed the command (Ran, Lost, TimedOut), or the
	// one that stopped leasewrap while it waited (Aborted); 0 otherwise.
	Signal syscall.Signal
	// Holder is who holds the lease: this run's holder once acquired
	// (Ran, Lost, TimedOut), the other holder if known for Conflict.
	Holder string
	// PID is the command's pid (Ran, Lost, TimedOut); 0 if it never started.
	PID int
	// Cause is why the command did not run to its own end (nil for Ran).
	Cause error
	// Waited is how long acquiring took (a pre-step included), Runtime how long
	// the command ran, Splayed how long Config.Splay delayed the start.
	Waited, Runtime, Splayed time.Duration
}

// ErrWaitTimeout reports that the lease was not acquired within the wait
// (in Result.Cause of a Conflict).
var ErrWaitTimeout = errors.New("supervisor: lease not acquired within --wait")

// ErrTimeout reports that the command ran past Config.Timeout and its
// job was stopped (in Result.Cause of a TimedOut run).
var ErrTimeout = errors.New("supervisor: the command ran past --timeout")

// ErrStart marks a failure to start the command (not found, not
// executable): the lease was released and nothing ran.
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

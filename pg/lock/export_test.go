package lock

import "time"

// SetNow replaces l's monotonic clock.
func SetNow(l *Locker, now func() time.Time) { l.now = now }

// SetSafetyPoll replaces how long at most l answers from a known hold.
func SetSafetyPoll(l *Locker, d time.Duration) { l.safetyPoll = d }

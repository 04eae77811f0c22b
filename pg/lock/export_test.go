package lock

import "time"

// SetNow replaces l's monotonic clock.
func SetNow(l *Locker, now func() time.Time) { l.now = now }

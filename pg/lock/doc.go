// Package lock is the pg kind's lease: one row per name in a normal,
// logged table (package table), taken by one INSERT … ON CONFLICT DO
// UPDATE … WHERE expired, renewed by an UPDATE guarded by holder and
// fence (never an upsert), released by the same guard with a NOTIFY in
// the same statement. Times are the server's statement_timestamp(); the
// holder's own deadline counts from when its last confirmed statement was
// sent (lease.Confirmed), so a renewal whose outcome is unknown (a
// timeout, a cut connection, a cancelled synchronous-replication wait)
// extends nothing.
//
// The fence (LEASEWRAP_FENCE) is max(previous + 1, timeline << 40): it
// grows with every holder of a name, across a failover too, while the HA
// manager fences the old primary and a name takes fewer than 2^40
// acquisitions per timeline. After the timeline changes nothing is
// granted for the table's largest TTL plus a margin (the quarantine).
//
// A waiter that LISTENs for releases answers a hold it found again
// without a statement until the row may have expired, a NOTIFY for the
// row arrives or the LISTEN connection drops (known.go), asking at
// least every 5 s.
//
// What is not guaranteed: mutual exclusion in time against a holder that
// was paused past its deadline; only a store that checks the fence
// rejects its late writes (docs/POSTGRES.md has the SQL). Loss is found
// by renewal: Done is nil.
package lock

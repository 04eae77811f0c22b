package once

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// DefaultMaxRequestBytes is etcd's default --max-request-bytes (1.5 MiB):
// the largest request the server accepts. A publish larger than that fails
// with "etcdserver: request is too large" after the job ran, so New refuses
// such a run before anything is acquired.
const DefaultMaxRequestBytes = 1536 * 1024

// requestOverhead is what a publish request carries besides the record and
// the two copies of its key (the compare and the put): the raft request
// header, the transaction's framing and field tags. Measured well under
// 200 bytes on etcd 3.4; 4 KiB leaves room for other server versions.
const requestOverhead = 4096

// resolvedArgvMargin covers what the supervisor's command resolution can
// add to argv before it is recorded: a file without #! runs as
// [/bin/sh PATH ARGS...], PATH absolute (at most PATH_MAX bytes, each up to
// six bytes once JSON-escaped).
const resolvedArgvMargin = len(`"/bin/sh",""`) + 6*4096

// worstDone is the largest record cfg's run can publish: the fields only
// known after the run (pid, times, exit code) at their longest encodings.
func worstDone(cfg Config) *Record {
	t := time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
	code := math.MinInt64
	return &Record{State: StateDone, RunID: cfg.RunID, Holder: cfg.Holder, Host: cfg.Host,
		PID: math.MinInt64, Started: t, Finished: &t, ExitCode: &code, Argv: cfg.Argv}
}

// checkSize refuses a run whose published record, at its largest, would
// not fit in one etcd request of cfg.MaxRequestBytes: the job would run
// and its result could not be recorded, so every retry would run it again.
// The error names the largest field and the limit.
func checkSize(cfg Config) error {
	limit := cfg.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	key := EtcdKey(cfg.Prefix, cfg.Key)
	rec := worstDone(cfg)
	size := len(rec.marshal()) + resolvedArgvMargin + 2*len(key) + requestOverhead
	if size <= limit {
		return nil
	}
	field, n := "key", 2*len(key)
	for _, f := range []struct {
		name string
		n    int
	}{
		{"the command line (argv, as JSON)", jsonLen(cfg.Argv)},
		{"--holder", jsonLen(cfg.Holder)},
		{"the host name", jsonLen(cfg.Host)},
		{"--run-id", jsonLen(cfg.RunID)},
	} {
		if f.n > n {
			field, n = f.name, f.n
		}
	}
	return fmt.Errorf("once %q: the record a run publishes would be up to %d bytes in one etcd request, more than the server's limit of %d (--max-request-bytes); %s alone takes %d bytes. Nothing was run: shorten it (pass long data in a file), or set --max-request-bytes to the server's own larger value",
		cfg.Key, size, limit, field, n)
}

// jsonLen is the length of v's JSON encoding (as Record.marshal writes it).
func jsonLen(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}

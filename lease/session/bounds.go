package session

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/leasewrap/leasewrap/internal/serdejson"
)

// MaxRecordBytes bounds an owner record. Readers read at most this many
// bytes plus one, and DecodeOwner refuses a larger record as corrupt
// (ErrCorrupt): an acquirer refuses to run beside it, Inspect lists it
// as unverifiable, Renew reports the lease lost, and nothing removes it.
// The seed writes thirteen fields, pretty-printed: under a kilobyte even
// with a long endpoint and executable path (PATH_MAX is 4 KiB). 1 MiB is a
// thousand times that.
const MaxRecordBytes = 1 << 20

// ErrTooLarge reports an owner registration whose record would be larger
// than MaxRecordBytes: every reader, this package's included, would refuse
// it, so the session would be blocked until someone removed it by hand.
var ErrTooLarge = errors.New("session: owner record too large")

// checkOwnerSize refuses an owner context whose record, at its largest
// (the pid, token and timestamps at their longest), would be larger than
// MaxRecordBytes, naming the longest field. NewLocker calls it, so such a
// registration is refused before anything is written or run.
func checkOwnerSize(sid ID, oc *OwnerContext) error {
	o := newOwner(sid, oc, math.MaxUint32, time.UnixMilli(math.MaxInt64), currentExe)
	o.PID, o.AcquiredAtMs, o.LastSeenMs = math.MaxUint32, math.MaxUint64, math.MaxUint64
	o.LeaseToken = fmt.Sprintf("%d-%d-%s", uint32(math.MaxUint32), uint64(math.MaxUint64), sid)
	b, err := EncodeOwner(&o)
	if err != nil {
		return err
	}
	if len(b) <= MaxRecordBytes {
		return nil
	}
	field, n := "", 0
	for _, f := range []struct {
		name string
		v    *string
	}{{"daemon_namespace (--namespace)", o.DaemonNamespace}, {"build_fingerprint (--build)", o.BuildFingerprint},
		{"endpoint (--endpoint)", o.Endpoint}, {"executable_path", o.ExecutablePath},
		{"daemon_instance_id (--instance)", o.DaemonInstanceID}} {
		if f.v == nil {
			continue
		}
		var e bytes.Buffer
		serdejson.WriteString(&e, *f.v)
		if e.Len() > n {
			field, n = f.name, e.Len()
		}
	}
	return fmt.Errorf("%w: session %s: the owner record would be %d bytes, more than the %d that every reader of it accepts; %s alone takes %d bytes encoded: shorten it",
		ErrTooLarge, sid, len(b), MaxRecordBytes, field, n)
}

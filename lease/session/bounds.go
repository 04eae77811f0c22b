package session

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/leasewrap/leasewrap/internal/serdejson"
)

// MaxRecordBytes bounds an owner record; DecodeOwner refuses a larger one (ErrCorrupt).
const MaxRecordBytes = 1 << 20

// ErrTooLarge reports an owner record that would exceed MaxRecordBytes.
var ErrTooLarge = errors.New("session: owner record too large")

// checkOwnerSize refuses an owner context whose largest record would exceed MaxRecordBytes.
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

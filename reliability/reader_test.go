package reliability

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// quoteKey is Python's urllib.parse.quote(key, safe=""). This file is an
// independent reader of the three kinds' files, written from the protocol
// descriptions and the seeds, not from lease/*: the battery's second
// opinion on what a crash left behind.
func quoteKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_.~-", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func claimPath(root, key string) string {
	return filepath.Join(root, ".fno", "claims", quoteKey(key)+".lock")
}

// indieClaim is the part of a claim record the checks need.
type indieClaim struct {
	Key, Holder, Host string
	PID               int
	ExpiresAt         int64 // 0: none
}

// readClaimIndie parses the top-level scalar lines of a PyYAML claim
// record (the writer emits one "name: value" line per field).
func readClaimIndie(path string) (*indieClaim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == ' ' || line[0] == '-' {
			continue
		}
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s: not a mapping line: %q", path, line)
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '\'' && val[len(val)-1] == '\'' || val[0] == '"' && val[len(val)-1] == '"') {
			val = val[1 : len(val)-1]
		}
		f[name] = val
	}
	c := &indieClaim{Key: f["key"], Holder: f["holder"], Host: f["host"]}
	if c.PID, err = strconv.Atoi(f["pid"]); err != nil {
		return nil, fmt.Errorf("%s: pid %q: %v", path, f["pid"], err)
	}
	if v := f["expires_at"]; v != "" && v != "null" {
		if c.ExpiresAt, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%s: expires_at %q: %v", path, v, err)
		}
	}
	if f["schema_version"] != "1" || c.Key == "" || c.Holder == "" {
		return nil, fmt.Errorf("%s: not a schema 1 claim: %v", path, f)
	}
	return c, nil
}

// pidAlive: the process exists and is not a zombie.
func pidAlive(pid int) bool { return procstat.Running(pid) }

// fnv128 is orchestratectl's key hash: two FNV-1a 64 passes with different
// offsets over each part as u64-LE length then bytes.
func fnv128(parts ...string) string {
	pass := func(h uint64) uint64 {
		for _, p := range parts {
			var n [8]byte
			binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
			for _, c := range append(n[:], p...) {
				h ^= uint64(c)
				h *= 0x100000001b3
			}
		}
		return h
	}
	return fmt.Sprintf("%016x%016x", pass(0x84222325cbf29ce4), pass(0xcbf29ce484222325))
}

// indieReservation is a reservation record as JSON.
type indieReservation struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         string `json:"run_id"`
	Creator       *struct {
		PID   uint32 `json:"pid"`
		Lease string `json:"materializer_lease_path"`
	} `json:"creator"`
	StaleRunIDs []string `json:"stale_run_ids"`
}

func reservationPath(home, key string) string {
	return filepath.Join(home, "idempotency", fnv128("", "", key))
}

// readReservationIndie returns nil, nil when there is no record.
func readReservationIndie(home, key string) (*indieReservation, error) {
	b, err := os.ReadFile(reservationPath(home, key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != '{' {
		return &indieReservation{RunID: strings.TrimSpace(string(b))}, nil // legacy
	}
	var r indieReservation
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.SchemaVersion != 1 || r.RunID == "" {
		return nil, fmt.Errorf("reservation %s: schema %d run %q", key, r.SchemaVersion, r.RunID)
	}
	return &r, nil
}

// flockHeld reports whether someone holds a flock on path (a try-lock of
// our own fails with EWOULDBLOCK). A missing file is not held.
func flockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK)
}

func manifestPath(home, runID string) string {
	return filepath.Join(home, "runs", runID, "manifest.json")
}

// manifestExit reads a published run's exit code; ok is false when the
// run is not published.
func manifestExit(home, runID string) (code int, ok bool, err error) {
	b, err := os.ReadFile(manifestPath(home, runID))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var m struct {
		RunID    string `json:"run_id"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, true, err
	}
	if m.RunID != runID {
		return 0, true, fmt.Errorf("manifest of %s names run %s", runID, m.RunID)
	}
	return m.ExitCode, true, nil
}

// indieOwner is a session owner record with its liveness: live while a
// flock is held on it (the owner's shared lock).
type indieOwner struct {
	Path       string
	LeaseToken string `json:"lease_token"`
	PID        uint32 `json:"pid"`
	Live       bool
}

func ownerDir(root, sid string) string { return filepath.Join(root, "leases", sid) }

// readOwnersIndie parses every <token>.json of the session.
func readOwnersIndie(root, sid string) ([]indieOwner, error) {
	ents, err := os.ReadDir(ownerDir(root, sid))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []indieOwner
	for _, en := range ents {
		if !strings.HasSuffix(en.Name(), ".json") {
			continue
		}
		p := filepath.Join(ownerDir(root, sid), en.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		o := indieOwner{Path: p}
		if err := json.Unmarshal(b, &o); err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if o.LeaseToken+".json" != en.Name() {
			return nil, fmt.Errorf("%s: token %q does not match the file name", p, o.LeaseToken)
		}
		o.Live = flockHeld(p)
		out = append(out, o)
	}
	return out, nil
}

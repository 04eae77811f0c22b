package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/seedharness"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestSeedInterop runs the seed's own Rust implementation (testdata/
// seedcheck, see its README) against this package on one root, in both
// directions. The binary is $LEASEWRAP_SEEDRS, else the one `make
// harnesses` builds; without it the test skips, and fails under CI.
func TestSeedInterop(t *testing.T) {
	bin := seedharness.Bin(t, "LEASEWRAP_SEEDRS", "seedcheck", "seedrs")
	ctx := context.Background()

	t.Run("seed owner seen and respected by Go", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		s := NewStore(root)
		rs := startSeed(t, bin, "acquire", root, sid.String(), "rust", "6")
		if line := rs.Line(t, seedharness.Within); !strings.HasPrefix(line, "acquired ") {
			t.Fatalf("want the seed to acquire, have %q", line)
		}
		recs, err := s.Inspect(sid)
		if err != nil || len(recs) != 1 || recs[0].Err != nil || recs[0].Liveness != Live {
			t.Fatalf("want one live decodable seed record, have %+v (%v)", recs, err)
		}
		raw, _ := os.ReadFile(recs[0].Path)
		again, _ := EncodeOwner(recs[0].Owner)
		if !bytes.Equal(raw, again) {
			t.Errorf("want our encoding of the seed's record byte-identical\nseed:\n%s\nours:\n%s", raw, again)
		}
		_, err = s.Acquire(ctx, sid, OwnerContext{StorageWriterEpoch: Some(uint32(6)), DaemonInstanceID: Some("go")})
		wantOwned(t, err)
		_, err = s.AcquireMaintenance(ctx, sid)
		wantOwned(t, err)
		same := mustAcquire(t, s, sid, OwnerContext{StorageWriterEpoch: Some(uint32(6)), DaemonInstanceID: Some("rust")})
		if obs := seedOwners(t, bin, root, sid); len(obs) != 2 {
			t.Errorf("want the seed to see 2 owners after a re-entrant Go registration, have %v", obs)
		}
		same.Release()
		rs.Stop(t, seedharness.Within)
		if owners, _ := s.ActiveOwners(sid); len(owners) != 0 {
			t.Errorf("want no owners after the seed released, have %d", len(owners))
		}
	})

	t.Run("Go owner seen and respected by the seed", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		s := NewStore(root)
		oc := testContext("go", 6)
		oc.Endpoint = Some("unix:///tmp/go.sock \"quoted\" é")
		g := mustAcquire(t, s, sid, oc)
		obs := seedOwners(t, bin, root, sid)
		if len(obs) != 1 || obs[0]["liveness"] != "live" {
			t.Fatalf("want the seed to see one live owner, have %v", obs)
		}
		if tok := obs[0]["owner"].(map[string]any)["lease_token"]; tok != g.Owner().LeaseToken {
			t.Errorf("want the seed to decode our token %s, have %v", g.Owner().LeaseToken, tok)
		}
		for _, args := range [][]string{{"acquire", root, sid.String(), "rust", "6"}, {"maintain", root, sid.String()}} {
			out, err := exec.Command(bin, args...).Output()
			if err == nil || !strings.Contains(string(out), "open in another incompatible Bcode writer") {
				t.Errorf("%s: want the seed refused by our owner, have %q (%v)", args[0], out, err)
			}
		}
		g.Release()
		rs := startSeed(t, bin, "acquire", root, sid.String(), "rust", "6")
		if line := rs.Line(t, seedharness.Within); !strings.HasPrefix(line, "acquired ") {
			t.Fatalf("want the seed to acquire after our release, have %q", line)
		}
		rs.Stop(t, seedharness.Within)
	})

	t.Run("Go maintenance blocks the seed until released", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		m, err := NewStore(root).AcquireMaintenance(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		rs := startSeed(t, bin, "acquire", root, sid.String(), "rust", "6")
		time.Sleep(200 * time.Millisecond)
		if rs.Exited() {
			t.Fatal("want the seed blocked by our maintenance, it exited")
		}
		m.Release()
		if line := rs.Line(t, seedharness.Within); !strings.HasPrefix(line, "acquired ") {
			t.Fatalf("want the seed to acquire after maintenance, have %q", line)
		}
		rs.Stop(t, seedharness.Within)
	})

	t.Run("seed maintenance blocks Go", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		rs := startSeed(t, bin, "maintain", root, sid.String())
		if line := rs.Line(t, seedharness.Within); line != "maintaining" {
			t.Fatalf("want the seed maintaining, have %q", line)
		}
		s := NewStore(root)
		s.lockBudget = 200 * time.Millisecond
		_, err := s.Acquire(ctx, sid, testContext("go", 6))
		var timeout *LockTimeoutError
		if !errors.As(err, &timeout) {
			t.Fatalf("want *LockTimeoutError, have %v", err)
		}
		if active, _ := s.MaintenanceIsActive(sid); !active {
			t.Error("want maintenance seen active")
		}
		rs.Stop(t, seedharness.Within)
		mustAcquire(t, s, sid, testContext("go", 6))
	})

	t.Run("killed seed owner is pruned by Go", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		rs := startSeed(t, bin, "acquire", root, sid.String(), "rust", "6")
		rs.Line(t, seedharness.Within)
		rs.Kill(t, seedharness.Within)
		s := NewStore(root)
		recs, _ := s.Inspect(sid)
		if len(recs) != 1 || recs[0].Liveness != Stale {
			t.Fatalf("want the killed seed's record stale, have %+v", recs)
		}
		mustAcquire(t, s, sid, testContext("go", 7))
		if _, err := os.Stat(recs[0].Path); err == nil {
			t.Errorf("want %s pruned", recs[0].Path)
		}
	})
}

// startSeed starts a seed command that holds what it took until stdin
// closes.
func startSeed(t *testing.T, bin string, args ...string) *testutil.Proc {
	t.Helper()
	return seedharness.Start(t, exec.Command(bin, args...))
}

func seedOwners(t *testing.T, bin, root string, sid ID) []map[string]any {
	t.Helper()
	out, err := exec.Command(bin, "owners", root, sid.String()).Output()
	if err != nil {
		t.Fatalf("seed owners: %v", err)
	}
	var obs []map[string]any
	if err := json.Unmarshal(out, &obs); err != nil {
		t.Fatalf("seed owners output %q: %v", out, err)
	}
	return obs
}

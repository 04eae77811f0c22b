package reliability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlantedExpiredEntry (issue 17): a regular file or a symlink planted
// at .fno/claims/.expired, where a stale claim's recovery archives it,
// is bad input: the recovery exits 65 naming the path and how to move it
// aside (was 70, an I/O error); nothing runs and the stale claim and the
// planted entry stay as they were. Once moved aside, the key recovers.
func TestPlantedExpiredEntry(t *testing.T) {
	for _, kind := range []string{"file", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.claimRoot(), ".fno", "claims")
			os.MkdirAll(dir, 0o755)
			stale := "schema_version: 1\nkey: reliability-key\nholder: gone\nacquired_at: 1\npid: 4194305\nhost: elsewhere\n"
			claim := claimPath(e.claimRoot(), "reliability-key")
			if err := os.WriteFile(claim, []byte(stale), 0o644); err != nil {
				t.Fatal(err)
			}
			expired := filepath.Join(dir, ".expired")
			if kind == "file" {
				os.WriteFile(expired, []byte("not a directory\n"), 0o644)
			} else {
				os.Symlink(t.TempDir(), expired)
			}
			r := e.run(kindClaimPID, "planted", 0, 0, "")
			t.Logf("RESULT .expired as a %s | exit %d | %s", kind, r.code, firstLine(r.err))
			if r.code != 65 || !strings.Contains(r.err, expired) || !strings.Contains(r.err, "mv ") || readWitness(t, e.witness)["planted"] != nil {
				t.Fatalf("want 65 naming %s and how to move it aside, nothing run; have %v", expired, r)
			}
			if b, err := os.ReadFile(claim); err != nil || string(b) != stale {
				t.Fatalf("the stale claim changed: %q %v", b, err)
			}
			if err := os.Rename(expired, expired+".aside"); err != nil {
				t.Fatal(err)
			}
			if r := e.run(kindClaimPID, "after", 0, 0, ""); r.code != 0 || readWitness(t, e.witness)["after"] == nil {
				t.Fatalf("after moving it aside: want the key recovered and run, have %v", r)
			}
		})
	}
}

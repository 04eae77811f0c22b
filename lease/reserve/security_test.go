package reserve

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// The seed opens its deterministic temp names with O_TRUNC; leasewrap
// creates them exclusively and writes beside whatever is planted there.
func TestPlantedTempNamesAreNeverWrittenThrough(t *testing.T) {
	plants := testutil.Plants()
	for name, plant := range plants {
		for _, op := range []string{"exclusive", "atomic"} {
			t.Run(name+"/"+op, func(t *testing.T) {
				dir := t.TempDir()
				victim := filepath.Join(t.TempDir(), "victim")
				want := []byte("victim contents\n")
				os.WriteFile(victim, want, 0o600)
				path := filepath.Join(dir, "0123456789abcdef0123456789abcdef")
				rec := NewRecord("01hzzzzzzzzzzzzzzzzzzzzzzz", nil)
				tmp := filepath.Join(dir, ".tmp-write-"+filepath.Base(path))
				if op == "exclusive" {
					tmp = filepath.Join(dir, ".tmp-claim-"+KeyHash("", "", rec.RunID))
				}
				if err := plant(victim, tmp); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					if op == "exclusive" {
						won, err := writeRecordExclusive(path, rec)
						if err == nil && !won {
							err = errors.New("lost to nobody")
						}
						done <- err
						return
					}
					done <- writeRecordAtomic(path, rec)
				}()
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("want the record written beside the planted temp, have %v", err)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("write hung")
				}
				if have, err := os.ReadFile(victim); err != nil || !bytes.Equal(have, want) {
					t.Errorf("victim changed: %q (%v)", have, err)
				}
				if have, err := os.ReadFile(path); err != nil || !bytes.Equal(have, rec.Marshal()) {
					t.Errorf("record: want %s, have %s (%v)", rec.Marshal(), have, err)
				}
				if _, err := os.Lstat(tmp); err != nil {
					t.Errorf("the planted entry must be left alone: %v", err)
				}
				ents, _ := os.ReadDir(dir)
				if len(ents) != 2 {
					t.Errorf("want the record and the planted entry only, have %v", ents)
				}
			})
		}
	}
}

func TestKeyLockRefusesAHardLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	lock := filepath.Join(dir, "k.lock")
	os.Link(victim, lock)
	err := withKeyLock(t.Context(), lock, time.Second, func() error { return nil })
	if !errorsIs(err, ErrUnsafePath) {
		t.Errorf("want ErrUnsafePath, have %v", err)
	}
}

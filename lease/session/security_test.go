package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/safefile"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// The owner record's temp name "<token>.json.tmp-<token>" is guessable
// (pid and milliseconds): whatever is planted there is left alone and the
// record is written beside it.
func TestOwnerRecordNeverWritesThroughAPlantedTemp(t *testing.T) {
	plants := testutil.Plants()
	for name, plant := range plants {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			want := []byte("victim contents\n")
			os.WriteFile(victim, want, 0o600)
			o := testOwner(NewID(), OwnerContext{})
			path := filepath.Join(dir, o.LeaseToken+".json")
			if err := plant(victim, tempPath(path, o.LeaseToken)); err != nil {
				t.Fatal(err)
			}
			f, err := writeOwnerRecord(path, &o, nil)
			if err != nil {
				t.Fatalf("want the record published, have %v", err)
			}
			f.Close()
			if have, err := os.ReadFile(victim); err != nil || !bytes.Equal(have, want) {
				t.Errorf("victim changed: %q (%v)", have, err)
			}
			if _, err := readOwner(path); err != nil {
				t.Errorf("published record: %v", err)
			}
		})
	}
}

func TestLockFileRefusesPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	for name, plant := range testutil.Plants() {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".lock")
			plant(victim, p)
			done := make(chan error, 1)
			go func() {
				f, err := openLockFile(p)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				var ie *IOError
				if !errors.As(err, &ie) || !errors.Is(err, safefile.ErrUnsafe) {
					t.Errorf("want an *IOError matching safefile.ErrUnsafe, have %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("openLockFile hung")
			}
		})
	}
}

package reserve

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

func TestMaterializerLiveness(t *testing.T) {
	dir := t.TempDir()
	lay := Layout{Home: dir}
	ml, err := AcquireMaterializerLease(lay, "01held")
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Close()
	unlocked := filepath.Join(dir, "unlocked.lease")
	os.WriteFile(unlocked, nil, 0o644)
	link := filepath.Join(dir, "link.lease")
	os.Symlink(unlocked, link)
	cases := []struct {
		name, path string
		want       Liveness
	}{
		{"held", ml.Path(), Live},
		{"unlocked", unlocked, Dead},
		{"missing", filepath.Join(dir, "missing.lease"), Unverifiable},
		{"symlink", link, Unverifiable},
		{"directory", dir, Unverifiable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if have := MaterializerLiveness(tc.path); have != tc.want {
				t.Fatalf("want %v, have %v", tc.want, have)
			}
		})
	}
}

func TestMaterializerLeaseStaysCloseOnExecAndIsClosedByClose(t *testing.T) {
	lay := Layout{Home: t.TempDir()}
	ml, err := AcquireMaterializerLease(lay, "01run")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(lay.Home, "idempotency", "materializers", "01run.lease"); ml.Path() != want {
		t.Fatalf("want %s, have %s", want, ml.Path())
	}
	flags, err := unix.FcntlInt(ml.File().Fd(), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		// The child inherits it via ExtraFiles only; a cleared flag would
		// leak a second copy into every process leasewrap starts.
		t.Fatalf("want FD_CLOEXEC kept on our copy, have flags %#x, %v", flags, err)
	}
	if _, err := AcquireMaterializerLease(lay, "01run"); err == nil {
		t.Fatal("a second lease for the same run id must fail")
	}
	if err := ml.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ml.Path()); !os.IsNotExist(err) {
		t.Fatalf("want the lease file removed, have %v", err)
	}
	if err := ml.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := AcquireMaterializerLease(lay, "../x"); !errorsIs(err, ErrInvalidRunID) {
		t.Fatalf("want ErrInvalidRunID, have %v", err)
	}
}

func TestCreatorLiveness(t *testing.T) {
	self, err := ProcessStartSecs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	unlocked := filepath.Join(dir, "dead.lease")
	os.WriteFile(unlocked, nil, 0o644)
	now := time.Now()
	cases := []struct {
		name string
		rec  *Record
		want Liveness
	}{
		{"legacy", &Record{RunID: "r"}, LegacyCreator},
		{"lease unlocked", NewRecord("r", NewCreator(1, u64(1), now, unlocked)), Dead},
		{"lease missing", NewRecord("r", NewCreator(1, u64(1), now, filepath.Join(dir, "none"))), Unverifiable},
		{"no lease, pid runs with its start time", NewRecord("r", NewCreator(uint32(os.Getpid()), u64(self+1), now, "")), Live},
		{"no lease, pid reused", NewRecord("r", NewCreator(uint32(os.Getpid()), u64(self-100), now, "")), Unverifiable},
		{"no lease, no start time", NewRecord("r", NewCreator(uint32(os.Getpid()), nil, now, "")), Unverifiable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if have := CreatorLiveness(tc.rec); have != tc.want {
				t.Fatalf("want %v, have %v", tc.want, have)
			}
		})
	}
}

func TestProcessStartSecs(t *testing.T) {
	before := time.Now().Unix()
	cmd := testutil.Sleeper(t)
	after := time.Now().Unix()
	have, err := ProcessStartSecs(cmd.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if int64(have) < before-1 || int64(have) > after+1 {
		t.Fatalf("want start within [%d, %d] ±1, have %d", before, after, have)
	}
	if _, err := ProcessStartSecs(0x7ffffffe); err == nil {
		t.Fatal("want an error for a pid that does not exist")
	}
}

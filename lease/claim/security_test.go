package claim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// victimFile is a file nothing in the test may change.
func victimFile(t *testing.T) (string, func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	want := []byte("victim contents\n")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, func() {
		t.Helper()
		if have, err := os.ReadFile(p); err != nil || !bytes.Equal(have, want) {
			t.Errorf("victim changed: want %q, have %q (%v)", want, have, err)
		}
	}
}

// plants are what another user can leave at a name leasewrap writes.
var plants = []struct {
	name  string
	plant func(victim, at string) error
}{
	{"symlink", func(v, at string) error { return os.Symlink(v, at) }},
	{"hardlink", func(v, at string) error { return os.Link(v, at) }},
	{"fifo", func(_, at string) error { return syscall.Mkfifo(at, 0o666) }},
}

func TestEventsLogRefusesWhatIsPlantedAtItsName(t *testing.T) {
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			c, root := newTestClaims(t)
			victim, check := victimFile(t)
			events := filepath.Join(root, ".fno", "events.jsonl")
			os.MkdirAll(filepath.Dir(events), 0o755)
			if err := p.plant(victim, events); err != nil {
				t.Fatal(err)
			}
			if p.name == "symlink" {
				// A link of ours is followed (an operator's); the planted
				// one is another user's.
				if err := os.Lchown(events, 65534, 65534); err != nil {
					t.Skipf("making a symlink of another owner needs root: %v", err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- c.appendEventLine(t.Context(), events, []byte(`{"x":1}`), time.Second) }()
			select {
			case err := <-done:
				if !errors.Is(err, safefile.ErrUnsafe) {
					t.Errorf("want a refusal matching safefile.ErrUnsafe, have %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("appending to a planted events log hung")
			}
			check()
			if _, err := os.Lstat(events + ".lock.d"); !os.IsNotExist(err) {
				t.Errorf("events mutex left behind: %v", err)
			}
		})
	}
}

// A mutex whose owner file cannot be written (ENOSPC) is removed by the
// process that made it, and the next renewal succeeds (issue 11 item 7).
func TestMutexWhoseOwnerCannotBeWrittenIsRemovedByItsMaker(t *testing.T) {
	c, root := newTestClaims(t)
	mustAcquire(t, c, "node:full", "h", AcquireOptions{TTLMs: 60_000})
	c.writeOwner = func(*os.File, []byte) error { return syscall.ENOSPC }
	mutex := recoveryMutex(lockfile(t, root, "node:full"))
	res, err := c.Renew(t.Context(), "node:full", "h", 60_000)
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("renew on a full disk: want an ENOSPC error (transient), have %s, %v", res, err)
	}
	if _, err := os.Lstat(mutex); !os.IsNotExist(err) {
		t.Fatalf("recovery mutex left behind after a failed stamp: %v", err)
	}
	events := filepath.Join(root, ".fno", "events.jsonl")
	if err := c.appendEventLine(t.Context(), events, []byte("{}"), 50*time.Millisecond); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("events append on a full disk: want ENOSPC, have %v", err)
	}
	if _, err := os.Lstat(events + ".lock.d"); !os.IsNotExist(err) {
		t.Fatalf("events mutex left behind after a failed stamp: %v", err)
	}
	c.writeOwner = writeOwnerFile
	if res, err := c.Renew(t.Context(), "node:full", "h", 60_000); res != Renewed || err != nil {
		t.Errorf("renew after the disk freed: want renewed, have %s (%v)", res, err)
	}
}

// The same on a real full file system: a 64 KiB tmpfs.
func TestRenewOnAFullTmpfsLeavesNoMutexAndRecovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; TestMutexWhoseOwnerCannotBeWrittenIsRemovedByItsMaker covers the rule through a seam")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0755"); err != nil {
		t.Skipf("mount tmpfs refused (%v); the seam test covers the rule", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	c := New(Options{Root: dir, EventsDir: dir, Getenv: testEnv(nil)})
	mustAcquire(t, c, "node:full", "h", AcquireOptions{TTLMs: 60_000})
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for i := 0; i < 1024; i++ { // bounded: 4 MiB > 64 KiB
		if _, err = f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want the tmpfs full (ENOSPC), have %v", err)
	}
	mutex := recoveryMutex(lockfile(t, dir, "node:full"))
	for i := 0; i < 3; i++ {
		res, err := c.Renew(t.Context(), "node:full", "h", 60_000)
		if err == nil {
			t.Fatalf("renew %d on a full disk: want an I/O error, have %s", i, res)
		}
		if res != "" {
			t.Errorf("renew %d on a full disk: want no result (a transient error), have %s", i, res)
		}
		if _, err := os.Lstat(mutex); !os.IsNotExist(err) {
			t.Fatalf("renew %d left its recovery mutex behind: %v", i, err)
		}
	}
	os.Remove(filler)
	if res, err := c.Renew(t.Context(), "node:full", "h", 60_000); res != Renewed || err != nil {
		t.Errorf("renew after the disk freed: want renewed, have %s (%v)", res, err)
	}
	if err := c.Release(t.Context(), "node:full", "h"); err != nil {
		t.Fatal(err)
	}
	if st := c.Status("node:full"); st.State != Free {
		t.Errorf("want released, have %s", st.State)
	}
}

// Symlinks planted at the temp names the seed's counter made predictable
// ("<enc>.lock.tmp.<pid>.<n>") are never written through: n is random.
func TestRenewNeverWritesThroughPlantedTempNames(t *testing.T) {
	c, root := newTestClaims(t)
	victim, check := victimFile(t)
	mustAcquire(t, c, "node:tmp", "h", AcquireOptions{TTLMs: 60_000})
	path := lockfile(t, root, "node:tmp")
	for n := 0; n < 64; n++ {
		if err := os.Symlink(victim, path+".tmp."+strconv.Itoa(os.Getpid())+"."+strconv.Itoa(n)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if res, err := c.Renew(t.Context(), "node:tmp", "h", 60_000); res != Renewed || err != nil {
			t.Fatalf("want renewed, have %s (%v)", res, err)
		}
	}
	check()
}

func TestOversizedMutexOwnerIsNeitherStolenNorDeleted(t *testing.T) {
	c, root := newTestClaims(t)
	lock := filepath.Join(root, "events.jsonl.lock.d")
	os.Mkdir(lock, 0o755)
	big := bytes.Repeat([]byte("x"), ownerMax+1)
	if err := os.WriteFile(filepath.Join(lock, "owner"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	ageDir(t, lock, staleMutexSteal+time.Minute)
	if c.stealIfStale(lock) {
		t.Error("a corpse with a corrupt owner file was stolen")
	}
	if b, err := os.ReadFile(filepath.Join(lock, "owner")); err != nil || len(b) != len(big) {
		t.Errorf("corrupt owner file changed: %d bytes, %v", len(b), err)
	}
}

func TestArchiveRefusesASymlinkedExpiredDirectory(t *testing.T) {
	_, root := newTestClaims(t)
	elsewhere := t.TempDir()
	path := lockfile(t, root, "node:stale")
	writeRecord(t, path, record(1, 1, nil, "h"))
	if err := os.Symlink(elsewhere, filepath.Join(filepath.Dir(path), expiredSubdir)); err != nil {
		t.Fatal(err)
	}
	if err := archiveClaim(path, 5); !errors.Is(err, safefile.ErrUnsafe) {
		t.Errorf("want a refusal, have %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("the claim was moved through the symlink: %v", ents)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the stale claim must stay in place: %v", err)
	}
}

func TestClaimFileSymlinkIsCorruptedNotFollowed(t *testing.T) {
	_, root := newTestClaims(t)
	victim, check := victimFile(t)
	path := lockfile(t, root, "node:sym")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.Symlink(victim, path)
	_, err := readClaimFile(path)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("want corrupted, have %v", err)
	}
	check()
}

// A mutex swapped for a symlink after it was taken: the release removes
// nothing through it, even where the link points at our token.
func TestReleaseNeverRemovesThroughASwappedMutex(t *testing.T) {
	c, root := newTestClaims(t)
	lock := filepath.Join(root, "events.jsonl.lock.d")
	tok, err := c.acquireDirMutex(t.Context(), lock, time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lock, lock+".moved"); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "owner"), []byte(tok), 0o644)
	if err := os.Symlink(elsewhere, lock); err != nil {
		t.Fatal(err)
	}
	c.releaseDirMutex(lock, tok)
	if b, err := os.ReadFile(filepath.Join(elsewhere, "owner")); err != nil || string(b) != tok {
		t.Errorf("the release removed or changed a file through the symlink: %q, %v", b, err)
	}
	if fi, err := os.Lstat(lock); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted symlink must be left: %v", err)
	}
}

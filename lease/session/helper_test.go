package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// The test binary re-execs itself as a helper process: TestMain runs the
// action named by helperEnv instead of the tests. Helpers get their
// parameters from the environment, like the seed's subprocess helpers.
const (
	helperEnv         = "LEASEWRAP_SESSION_TEST_HELPER"
	helperRootEnv     = "LEASEWRAP_SESSION_TEST_ROOT"
	helperSIDEnv      = "LEASEWRAP_SESSION_TEST_ID"
	helperReadyEnv    = "LEASEWRAP_SESSION_TEST_READY"
	helperAcquiredEnv = "LEASEWRAP_SESSION_TEST_ACQUIRED"
	helperBuildEnv    = "LEASEWRAP_SESSION_TEST_BUILD"
	helperGoEnv       = "LEASEWRAP_SESSION_TEST_GO"
	helperReleaseEnv  = "LEASEWRAP_SESSION_TEST_RELEASE"
	// helperCrashEnv names the crash point (crashPrePublish, crashHandoff)
	// at which the helper kills itself with SIGKILL, through crashHook.
	helperCrashEnv = "LEASEWRAP_SESSION_TEST_CRASH"
)

// helperDeadline bounds every wait a helper makes.
const helperDeadline = 30 * time.Second

func TestMain(m *testing.M) {
	if action := os.Getenv(helperEnv); action != "" {
		if err := runHelper(action); err != nil {
			fmt.Fprintf(os.Stderr, "helper %s: %v\n", action, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testContext is the seed tests' context(build, epoch).
func testContext(build string, epoch uint32) OwnerContext {
	oc := DefaultOwnerContext()
	oc.StorageWriterEpoch = Some(epoch)
	oc.BuildFingerprint = Some(build)
	oc.ProtocolVersion = Some(uint32(2))
	oc.DaemonInstanceID = Some(build)
	return oc
}

// sameDaemonContext is the seed tests' same_daemon_context.
func sameDaemonContext(build, instance string, epoch uint32) OwnerContext {
	oc := testContext(build, epoch)
	oc.DaemonInstanceID = Some(instance)
	return oc
}

func runHelper(action string) error {
	root := os.Getenv(helperRootEnv)
	sid, err := ParseID(os.Getenv(helperSIDEnv))
	if err != nil {
		return err
	}
	if point := os.Getenv(helperCrashEnv); point != "" {
		crashHook = func(name string) {
			if name == point {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // never return past the point
			}
		}
	}
	s := NewStore(root)
	ctx := context.Background()
	switch action {
	case "pre-publish":
		// pre_publish_crash_helper: the crash env var kills us before rename.
		_, err := s.Acquire(ctx, sid, testContext("crashing", 5))
		return fmt.Errorf("returned past the crash point: %v", err)
	case "handoff":
		// lease_handoff_crash_helper.
		m, err := s.AcquireMaintenance(ctx, sid)
		if err != nil {
			return err
		}
		_, err = m.TransitionToLease(testContext("handoff-crash", 7))
		return fmt.Errorf("returned past the handoff crash point: %v", err)
	case "race":
		return raceHelper(ctx, s, sid)
	case "prepared-pre-publish":
		// A waiter whose Wake prepared the record file, killed at the
		// publish point of the attempt that registers.
		l, err := NewLocker(LockerConfig{SessionID: sid, Root: root, OwnerContext: testContext("crashing", 5)})
		if err != nil {
			return err
		}
		w, err := l.Notify(ctx)
		if err != nil {
			return err
		}
		if _, err := w.Wait(ctx, nil, time.Millisecond); err != nil {
			return err
		}
		if l.prep == nil {
			return errors.New("the Wake prepared no record file")
		}
		_, err = l.Acquire(ctx)
		return fmt.Errorf("returned past the crash point: %v", err)
	}
	// subprocess_lock_helper.
	ready, acquired := os.Getenv(helperReadyEnv), os.Getenv(helperAcquiredEnv)
	if err := writeFileAtomic(ready, []byte("ready")); err != nil {
		return err
	}
	switch action {
	case "lease", "hold-lease":
		g, err := s.Acquire(ctx, sid, testContext("subprocess", 7))
		if err != nil {
			return err
		}
		defer g.Release()
		if err := writeFileAtomic(acquired, []byte("acquired")); err != nil {
			return err
		}
		if action == "hold-lease" {
			return testutil.Poll(helperDeadline, func() bool { return !exists(ready) })
		}
		return nil
	case "write":
		g, err := s.AcquireWriteLock(ctx, sid)
		if err != nil {
			return err
		}
		defer g.Release()
		return writeFileAtomic(acquired, []byte("acquired"))
	}
	return fmt.Errorf("unknown subprocess lock action %q", action)
}

// raceHelper waits for the start file, acquires as daemon $BUILD and
// reports "ok", "owned" or the error in $ACQUIRED, then holds what it got
// until the release file appears.
func raceHelper(ctx context.Context, s *Store, sid ID) error {
	if err := testutil.Poll(helperDeadline, func() bool { return exists(os.Getenv(helperGoEnv)) }); err != nil {
		return err
	}
	g, err := s.Acquire(ctx, sid, testContext(os.Getenv(helperBuildEnv), 7))
	result := "ok"
	var owned *OwnedError
	switch {
	case errors.As(err, &owned):
		result = "owned"
	case err != nil:
		result = "error: " + err.Error()
	}
	if g != nil {
		defer g.Release()
	}
	if err := writeFileAtomic(os.Getenv(helperAcquiredEnv), []byte(result)); err != nil {
		return err
	}
	return testutil.Poll(helperDeadline, func() bool { return exists(os.Getenv(helperReleaseEnv)) })
}

// writeFileAtomic publishes data at path whole: written to a temp file in
// the same directory, then renamed over path. A process that polls for the
// file (exists) and then reads it must never see it created but not yet
// written, as os.WriteFile would let it (the race that made
// TestTwoCurrentDaemonsRacingForOneSessionYieldOneOwner flaky).
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// helperCmd returns the test binary re-executed as helper action.
func helperCmd(t *testing.T, action, root string, sid ID, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		helperEnv+"="+action,
		helperRootEnv+"="+root,
		helperSIDEnv+"="+sid.String(),
	)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// testOwner is SessionLeaseOwner::new for tests: a record registered a second ago by this process: a real
// registration made in the same millisecond would get the same token (and
// path), which would make "was the old record pruned?" unanswerable.
func testOwner(sid ID, oc OwnerContext) Owner {
	return newOwner(sid, &oc, os.Getpid(), time.Now().Add(-time.Second), currentExe)
}

// writePretty writes o as fs::write(serde_json::to_vec_pretty(o)) would:
// no lock, no temp file.
func writePretty(t *testing.T, path string, o *Owner) {
	t.Helper()
	data, err := EncodeOwner(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o666); err != nil {
		t.Fatal(err)
	}
}

// placeOwner writes o at its path in s's owner directory of sid as
// writePretty does, and returns the path.
func placeOwner(t *testing.T, s *Store, sid ID, o *Owner) string {
	t.Helper()
	path := ownerDirFile(t, s, sid, o.LeaseToken+".json")
	writePretty(t, path, o)
	return path
}

// ownerDirFile is the path of name in s's owner directory of sid, which
// it makes when missing.
func ownerDirFile(t *testing.T, s *Store, sid ID, name string) string {
	t.Helper()
	if err := os.MkdirAll(s.OwnerDir(sid), 0o777); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(s.OwnerDir(sid), name)
}

// placeDeadOwner leaves an owner of sid as a SIGKILLed daemon leaves it:
// the record of an exited pid, its lock gone with the descriptor. It
// returns the record's path.
func placeDeadOwner(t *testing.T, s *Store, sid ID, oc OwnerContext, token string) string {
	t.Helper()
	dead := deadPID(t)
	if processAlive(dead) {
		t.Fatalf("want pid %d dead for the test, it is alive", dead)
	}
	o := testOwner(sid, oc)
	o.LeaseToken = token + "-" + itoa(dead)
	o.PID = dead
	path := ownerPathOf(s, sid, &o)
	f, err := writeOwnerRecord(path, &o, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// mustAcquire acquires or fails the test; the guard is released at cleanup.
func mustAcquire(t *testing.T, s *Store, sid ID, oc OwnerContext) *OwnerGuard {
	t.Helper()
	g, err := s.Acquire(context.Background(), sid, oc)
	if err != nil {
		t.Fatalf("acquire %s as %s: %v", sid, *oc.DaemonInstanceID, err)
	}
	t.Cleanup(func() { g.Release() })
	return g
}

// wantOwned fails unless err is an *OwnedError and returns it.
func wantOwned(t *testing.T, err error) *OwnedError {
	t.Helper()
	var owned *OwnedError
	if !errors.As(err, &owned) {
		t.Fatalf("want *OwnedError, have %T: %v", err, err)
	}
	return owned
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) uint32 {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return uint32(cmd.Process.Pid)
}

func ownerPathOf(s *Store, sid ID, o *Owner) string {
	return filepath.Join(s.OwnerDir(sid), o.LeaseToken+".json")
}

func fmtUint(n uint64) string { return fmt.Sprintf("%d", n) }

func itoa(n uint32) string { return fmtUint(uint64(n)) }

// startHelper starts a helper process; it is killed when the test ends.
func startHelper(t *testing.T, cmd *exec.Cmd) *testutil.Proc {
	t.Helper()
	cmd.Stderr = os.Stderr
	return testutil.Start(t, cmd)
}

// helperWait bounds a test's wait for a helper's exit.
const helperWait = 15 * time.Second

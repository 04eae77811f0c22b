package inherit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const childEnv = "INHERIT_TEST_CHILD"

// TestMain lets the test binary act as a child started under a lease: it
// reports what FromEnv and Check say and which descriptors it has.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		l, err := FromEnv()
		if err != nil {
			fmt.Println("fromenv:", err)
			os.Exit(0)
		}
		fmt.Printf("kind=%s key=%s holder=%s fd=%d extra=%v\n", l.Kind, l.Key, l.Holder, l.FD, l.Extra)
		if err := l.Check(); err != nil {
			fmt.Println("check:", err)
		} else {
			fmt.Println("check: ok")
		}
		fmt.Println("fds:", strings.Join(inheritedFDs(3), ","))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// openFDs lists this process's descriptors, minus the one reading the list.
func openFDs() []string {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	self := fmt.Sprint(d.Fd())
	var out []string
	for _, n := range names {
		if n != self {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// inheritedFDs lists this process's descriptors numbered from min up that
// lack FD_CLOEXEC: right after exec those are exactly the ones inherited
// (the Go runtime opens its own with FD_CLOEXEC).
func inheritedFDs(min int) []string {
	var out []string
	for _, n := range openFDs() {
		var fd int
		fmt.Sscan(n, &fd)
		if fd < min {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			out = append(out, n)
		}
	}
	return out
}

// wantFDs is the sorted descriptor list a child should report.
func wantFDs(t *testing.T, own ...string) string {
	// Descriptors this test process inherited without FD_CLOEXEC from
	// whatever started it reach any child of any exec: not leaks of ours.
	all := append(own, inheritedFDs(3)...)
	slices.Sort(all)
	return "fds: " + strings.Join(slices.Compact(all), ",") + "\n"
}

func lockedFile(t *testing.T, how int) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "lease.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if how != 0 {
		if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func runChild(t *testing.T, h Handover, base []string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	Attach(cmd, append(base, childEnv+"=1"), h)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return string(out)
}

func TestChildSeesContractAndOnlyTheLeaseDescriptor(t *testing.T) {
	for _, tc := range []struct {
		name string
		how  int
	}{{"exclusive", unix.LOCK_EX}, {"shared", unix.LOCK_SH}} {
		t.Run(tc.name, func(t *testing.T) {
			f := lockedFile(t, tc.how)
			out := runChild(t, Handover{Kind: "session", Key: "k1", Holder: "h1", File: f,
				Env: []string{"LEASEWRAP_SESSION_ID=k1"}},
				[]string{"PATH=" + os.Getenv("PATH"), "LEASEWRAP_FD=9", "LEASEWRAP_RUN_ID=stale-outer"})
			for _, want := range []string{"kind=session key=k1 holder=h1 fd=3", "LEASEWRAP_SESSION_ID:k1", "check: ok", wantFDs(t, "3")} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in child output, have:\n%s", want, out)
				}
			}
			if strings.Contains(out, "stale-outer") {
				t.Errorf("an inherited LEASEWRAP_* variable leaked into the child:\n%s", out)
			}
		})
	}
}

func TestCheckFailsWithoutALock(t *testing.T) {
	f := lockedFile(t, 0)
	out := runChild(t, Handover{Kind: "reservation", Key: "k", Holder: "h", File: f}, nil)
	if !strings.Contains(out, "carries no flock lock") {
		t.Fatalf("want Check to report the missing lock, have:\n%s", out)
	}
}

func TestCheckFailsWhenTheLockFileWasRemoved(t *testing.T) {
	f := lockedFile(t, unix.LOCK_SH)
	if err := os.Remove(f.Name()); err != nil {
		t.Fatal(err)
	}
	out := runChild(t, Handover{Kind: "session", Key: "k", Holder: "h", File: f}, nil)
	if !strings.Contains(out, "lock file was removed") {
		t.Fatalf("want Check to report the removed file, have:\n%s", out)
	}
}

func TestKindWithoutDescriptor(t *testing.T) {
	out := runChild(t, Handover{Kind: "claim", Key: "build:nightly", Holder: "h"}, nil)
	for _, want := range []string{"kind=claim key=build:nightly holder=h fd=-1", "check: ok", wantFDs(t)} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in child output, have:\n%s", want, out)
		}
	}
}

func TestFromEnvErrors(t *testing.T) {
	if _, err := fromEnv([]string{"PATH=/bin"}); err != ErrNoLease {
		t.Fatalf("want ErrNoLease, have %v", err)
	}
	if _, err := fromEnv([]string{"LEASEWRAP_KIND=claim", "LEASEWRAP_FD=1"}); err == nil {
		t.Fatal("want an error for LEASEWRAP_FD=1")
	}
}

package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// fakeTree writes pids.max and pids.current files as a cgroup tree with
// the pids controller enabled would have them (root: none).
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, v := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The job cgroup's pids.max keeps a margin of the tightest ancestor's room
// for leasewrap (issue 23.3): a unit with TasksMax=100 running 40 tasks, a
// slice above it with room for more, a job cgroup below.
func TestKeepPidsLeavesRoomForLeasewrap(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"slice/pids.max": "1000", "slice/pids.current": "900",
		"slice/unit/pids.max": "100", "slice/unit/pids.current": "40",
		"slice/unit/job/pids.max": "max", "slice/unit/job/pids.current": "0",
	})
	g := Open(filepath.Join(root, "slice/unit/job"))
	for _, tc := range []struct {
		margin, want int64
	}{{16, 60 - 16}, {59, 1}, {100, 1}} {
		have, err := g.KeepPids(tc.margin)
		if err != nil || have != tc.want {
			t.Fatalf("margin %d: want %d, have %d, %v", tc.margin, tc.want, have, err)
		}
		b, _ := os.ReadFile(filepath.Join(g.Dir(), "pids.max"))
		if strings.TrimSpace(string(b)) != strconv.FormatInt(tc.want, 10) {
			t.Fatalf("margin %d: pids.max: want %d, have %s", tc.margin, tc.want, b)
		}
	}
	// The slice is the tightest once it has less room.
	os.WriteFile(filepath.Join(root, "slice/pids.current"), []byte("980"), 0o644)
	if have, _ := g.KeepPids(16); have != 4 {
		t.Fatalf("slice with room for 20: want 4, have %d", have)
	}
	// No limit above: nothing set; no pids.max of its own: nothing set.
	free := Open(filepath.Join(fakeTree(t, map[string]string{"a/pids.max": "max", "a/pids.current": "3", "a/job/pids.max": "max"}), "a/job"))
	if have, err := free.KeepPids(16); have != 0 || err != nil {
		t.Fatalf("no limit above: want 0, have %d, %v", have, err)
	}
	none := Open(t.TempDir())
	if have, err := none.KeepPids(16); have != 0 || err != nil {
		t.Fatalf("no pids.max: want 0, have %d, %v", have, err)
	}
}

// PidsRoom sees a pids limit on this process's cgroup: a v1 pids cgroup
// (this host's) or a v2 one with pids.max, entered by a child.
func TestPidsRoomSeesALimit(t *testing.T) {
	if os.Getenv("CGROUP_PIDS_CHILD") != "" {
		if room, at, err := PidsRoom(); err == nil && room >= 0 && room <= 500 {
			os.Exit(0)
		} else {
			fmt.Printf("PidsRoom() = %d, %q, %v\n", room, at, err)
		}
		os.Exit(3)
	}
	room, at, err := PidsRoom()
	t.Logf("this test process: PidsRoom() = %d, %q, %v", room, at, err)
	dir := ""
	if pl, err := Locate(); err == nil {
		if b, err := os.ReadFile(filepath.Join(pl.Mount, "cgroup.subtree_control")); err == nil && strings.Contains(string(b), "pids") {
			dir = filepath.Join(pl.Mount, fmt.Sprintf("lwtest-pids-%d", os.Getpid()))
		}
	}
	if dir == "" {
		var st unix.Statfs_t
		if err := unix.Statfs("/sys/fs/cgroup/pids", &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
			testutil.Need(t, "a pids controller (v2 root with pids enabled, or a v1 pids hierarchy)", fmt.Errorf("none here (%v)", err))
		}
		dir = filepath.Join("/sys/fs/cgroup/pids", fmt.Sprintf("lwtest-pids-%d", os.Getpid()))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		testutil.Need(t, "a writable pids hierarchy (root)", err)
	}
	t.Cleanup(func() { unix.Rmdir(dir) })
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte("500"), 0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, os.Args[0], "-test.run=^TestPidsRoomSeesALimit$")
	cmd.Env = append(os.Environ(), "CGROUP_PIDS_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inside a cgroup with pids.max 500: want PidsRoom to see it, have %v: %s", err, out)
	}
}

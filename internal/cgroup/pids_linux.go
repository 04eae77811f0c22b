package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PidsRoom returns the fewest tasks any pids.max that applies to this
// process (v2 or v1, its cgroup or an ancestor) still has room for, and the
// cgroup directory of that limit; room is -1 where none applies. An error
// says what could not be read (a caller counts that as limited).
func PidsRoom() (room int64, at string, err error) {
	pc, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return -1, "", err
	}
	room = -1
	for _, line := range strings.Split(string(pc), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		var dir, top string
		switch {
		case f[0] == "0" && f[1] == "":
			for _, mnt := range usualMounts {
				if pl, _ := place(mnt, "/", f[2]); isCgroup2(mnt) && knownDir(pl.Dir, f[2]) {
					dir, top = pl.Dir, mnt
					break
				}
			}
			if dir == "" {
				return -1, "", fmt.Errorf("cgroup: no cgroup v2 mount holds %s", f[2])
			}
		case hasController(f[1], "pids"):
			top = "/sys/fs/cgroup/pids"
			var st unix.Statfs_t
			if unix.Statfs(top, &st) != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
				return -1, "", fmt.Errorf("cgroup: no cgroup v1 pids hierarchy at %s", top)
			}
			dir = filepath.Join(top, f[2])
		default:
			continue
		}
		if r, d, _ := pidsRoom(dir, top); r >= 0 && (room < 0 || r < room) {
			room, at = r, d
		}
	}
	return room, at, nil
}

func hasController(list, c string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == c {
			return true
		}
	}
	return false
}

// pidsRoom returns the fewest tasks any limited cgroup from dir up to top
// still has room for (pids.max − pids.current, at least 0), or −1 if none,
// and that cgroup.
func pidsRoom(dir, top string) (room int64, at string, err error) {
	room = -1
	for d := dir; d == top || strings.HasPrefix(d, top+"/"); d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "pids.max"))
		if errors.Is(err, os.ErrNotExist) {
			continue // the controller is not enabled here
		}
		if err != nil {
			return room, at, err
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			continue
		}
		lim, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return room, at, fmt.Errorf("cgroup: %s/pids.max: %w", d, err)
		}
		b, err = os.ReadFile(filepath.Join(d, "pids.current"))
		if err != nil {
			return room, at, err
		}
		cur, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return room, at, fmt.Errorf("cgroup: %s/pids.current: %w", d, err)
		}
		if r := max(lim-cur, 0); room < 0 || r < room {
			room, at = r, d
		}
	}
	return room, at, nil
}

// KeepPids keeps margin tasks above the job cgroup for its creator: its
// pids.max becomes the ancestors' room less margin (at least 1), a snapshot.
// It returns the limit set, or 0 when there is nothing to set.
func (g *Group) KeepPids(margin int64) (int64, error) {
	file := filepath.Join(g.dir, "pids.max")
	if _, err := os.Stat(file); err != nil {
		return 0, nil
	}
	// top: the first ancestor without pids.max (the root, or where the
	// controller is not enabled).
	top := filepath.Dir(g.dir)
	for ; top != "/"; top = filepath.Dir(top) {
		if _, err := os.Stat(filepath.Join(top, "pids.max")); err != nil {
			break
		}
	}
	room, _, err := pidsRoom(filepath.Dir(g.dir), top)
	if err != nil || room < 0 {
		return 0, err
	}
	limit := max(room-margin, 1)
	if err := os.WriteFile(file, []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
		return 0, fmt.Errorf("cgroup: limit %s: %w", file, err)
	}
	return limit, nil
}

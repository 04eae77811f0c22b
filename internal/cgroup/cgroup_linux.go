package cgroup

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by every reason Parent gives for not offering a
// place to create a job cgroup.
var ErrUnavailable = errors.New("cgroup: no cgroup v2 directory of our own")

// ErrUndelegated is wrapped (with ErrUnavailable) when our cgroup is a systemd
// unit's not marked delegated; Parent still returns the directory, since
// systemd before 251 marks none.
var ErrUndelegated = errors.New("cgroup: systemd unit not delegated")

// Prefix starts the name of every job cgroup leasewrap creates:
// leasewrap-<creator pid>-<random hex>.
const Prefix = "leasewrap-"

// Place is where this process sits in the cgroup v2 hierarchy.
type Place struct {
	Mount string // where the v2 hierarchy is mounted (/sys/fs/cgroup or /sys/fs/cgroup/unified)
	Path  string // this process's cgroup, relative to the hierarchy's root ("/" = root)
	Dir   string // Mount joined with Path: the directory of this process's cgroup
}

// Locate finds this process's cgroup ("0::" in /proc/self/cgroup) and its v2
// mount: a usual place (statfs, cheaper than mountinfo) when knownDir is
// sure, else /proc/self/mountinfo.
func Locate() (Place, error) {
	pc, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Place{}, fmt.Errorf("%w: read /proc/self/cgroup: %v", ErrUnavailable, err)
	}
	p, err := selfPath(pc)
	if err != nil {
		return Place{}, err
	}
	for _, mnt := range usualMounts {
		if pl, _ := place(mnt, "/", p); isCgroup2(mnt) && knownDir(pl.Dir, p) {
			return pl, nil
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Place{}, fmt.Errorf("%w: read /proc/self/mountinfo: %v", ErrUnavailable, err)
	}
	mnt, root, err := findMount(mi)
	if err != nil {
		return Place{}, err
	}
	return place(mnt, root, p)
}

// usualMounts are where cgroup v2 is mounted on systemd hosts and in
// containers: unified, then hybrid.
var usualMounts = []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}

func isCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// knownDir reports whether dir (a usual mount joined with our path p) is our
// cgroup for certain: for p "/", the top has no cgroup.events (only the
// real root lacks it); otherwise dir's cgroup.procs lists our pid.
func knownDir(dir, p string) bool {
	if p == "/" {
		return unix.Access(filepath.Join(dir, "cgroup.events"), unix.F_OK) == unix.ENOENT
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return false
	}
	self := strconv.Itoa(os.Getpid())
	for _, f := range bytes.Fields(b) {
		if string(f) == self {
			return true
		}
	}
	return false
}

// place joins the mount with the process's path, which lies under the
// mount's root when a sub-hierarchy is mounted.
func place(mnt, root, p string) (Place, error) {
	rel := p
	if root != "/" {
		if p != root && !strings.HasPrefix(p, root+"/") {
			return Place{}, fmt.Errorf("%w: our cgroup %s is outside the hierarchy mounted at %s (mount root %s)", ErrUnavailable, p, mnt, root)
		}
		rel = strings.TrimPrefix(p, root)
		if rel == "" {
			rel = "/"
		}
	}
	return Place{Mount: mnt, Path: p, Dir: filepath.Join(mnt, rel)}, nil
}

// findMount returns the mount point and mount root of the first cgroup2
// file system in a mountinfo text. Fields: id parent major:minor root
// mountpoint options [optional...] - fstype source superoptions.
func findMount(mi []byte) (mnt, root string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(mi))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, s := range f {
			if s == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		return unescape(f[4]), unescape(f[3]), nil
	}
	return "", "", fmt.Errorf("%w: no cgroup2 file system in /proc/self/mountinfo (cgroup v1 only, or not mounted)", ErrUnavailable)
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// selfPath returns the cgroup v2 path of a /proc/PID/cgroup text.
func selfPath(pc []byte) (string, error) {
	for _, line := range strings.Split(string(pc), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			if !strings.HasPrefix(p, "/") {
				return "", fmt.Errorf("%w: unexpected cgroup v2 path %q in /proc/self/cgroup", ErrUnavailable, p)
			}
			// "/foo (deleted)" if our cgroup was removed under us.
			if strings.HasSuffix(p, " (deleted)") {
				return "", fmt.Errorf("%w: our cgroup %s was removed", ErrUnavailable, p)
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no cgroup v2 (0::) line in /proc/self/cgroup", ErrUnavailable)
}

// Parent returns our own cgroup's directory as the parent of job cgroups
// when it and its cgroup.procs are writable (the common ancestor of a
// migration), it is not an undelegated systemd unit (.service or .scope
// without trusted.delegate or user.delegate: ErrUndelegated, with the
// directory), and clone3(2) is allowed. Create checks cgroup.kill. Every
// error wraps ErrUnavailable and says why.
func Parent() (string, error) {
	pl, err := Locate()
	if err != nil {
		return "", err
	}
	return check(pl.Dir)
}

func check(dir string) (string, error) {
	if err := clone3(); err != nil {
		return "", err
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return "", fmt.Errorf("%w: our cgroup %s is not writable (%v): not root and not a delegated subtree", ErrUnavailable, dir, err)
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK); err != nil {
		return "", fmt.Errorf("%w: %s/cgroup.procs is not writable (%v): a process cannot move below it", ErrUnavailable, dir, err)
	}
	if unit := filepath.Base(dir); (strings.HasSuffix(unit, ".service") || strings.HasSuffix(unit, ".scope")) && !delegated(dir) {
		return dir, fmt.Errorf("%w: %w: %s is the cgroup of systemd unit %s, not marked delegated (set Delegate=yes; systemd before 251 marks none)", ErrUnavailable, ErrUndelegated, dir, unit)
	}
	return dir, nil
}

// clone3 checks that clone3(2), which CLONE_INTO_CGROUP needs, is allowed
// (not ENOSYS from seccomp or an old kernel); with no arguments it starts nothing.
func clone3() error {
	_, _, errno := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	if errno == unix.ENOSYS || errno == unix.EPERM {
		return fmt.Errorf("%w: clone3 is refused (%v): a seccomp profile forbids it, or the kernel is older than 5.3", ErrUnavailable, errno)
	}
	return nil
}

// delegated reports whether systemd marked dir as delegated (systemd 251
// and later set trusted.delegate, or user.delegate for user managers).
func delegated(dir string) bool {
	var b [8]byte
	for _, attr := range []string{"trusted.delegate", "user.delegate"} {
		if n, err := unix.Getxattr(dir, attr, b[:]); err == nil && n > 0 && b[0] == '1' {
			return true
		}
	}
	return false
}

// newName returns a fresh job cgroup name for this process.
func newName() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%d-%s", Prefix, os.Getpid(), hex.EncodeToString(b[:])), nil
}

// creatorPID parses the creator's pid out of a job cgroup's name.
func creatorPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

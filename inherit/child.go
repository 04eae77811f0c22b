package inherit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNoLease reports a process not started by leasewrap (no LEASEWRAP_KIND).
var ErrNoLease = errors.New("inherit: no lease in the environment (not started by leasewrap)")

// Lease is the lease a child was started under, from its environment.
type Lease struct {
	Kind, Key, Holder string
	// FD is the inherited locked descriptor, or -1 for kinds without one.
	FD int
	// SupervisorPID is the pid of the leasewrap that started the child.
	SupervisorPID int
	// Extra holds the other LEASEWRAP_* variables, keyed by full name.
	Extra map[string]string
}

// FromEnv reads the lease description from the process environment.
func FromEnv() (*Lease, error) { return fromEnv(os.Environ()) }

func fromEnv(environ []string) (*Lease, error) {
	l := &Lease{FD: -1, Extra: map[string]string{}}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, envPrefix) {
			continue
		}
		switch k {
		case EnvKind:
			l.Kind = v
		case EnvKey:
			l.Key = v
		case EnvHolder:
			l.Holder = v
		case EnvFD:
			fd, err := strconv.Atoi(v)
			if err != nil || fd < 3 {
				return nil, fmt.Errorf("inherit: %s=%q is not a descriptor number ≥ 3", EnvFD, v)
			}
			l.FD = fd
		case EnvPID:
			l.SupervisorPID, _ = strconv.Atoi(v)
		default:
			l.Extra[k] = v
		}
	}
	if l.Kind == "" {
		return nil, ErrNoLease
	}
	return l, nil
}

// Check verifies, changing nothing, that the inherited descriptor is open, its
// file still exists and it carries a flock (/proc/self/fdinfo); nil for kinds
// without a descriptor.
func (l *Lease) Check() error {
	if l.FD < 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(l.FD, &st); err != nil {
		return fmt.Errorf("inherit: lease descriptor %d: %w (was it closed?)", l.FD, err)
	}
	if st.Nlink == 0 {
		return fmt.Errorf("inherit: lease descriptor %d: the lock file was removed; the lease is gone", l.FD)
	}
	locked, err := hasFlock(l.FD)
	if err != nil {
		return err
	}
	if !locked {
		return fmt.Errorf("inherit: lease descriptor %d carries no flock lock; the lease is not held", l.FD)
	}
	return nil
}

// hasFlock reports whether /proc/self/fdinfo/fd lists a FLOCK lock.
func hasFlock(fd int) (bool, error) {
	p := fmt.Sprintf("/proc/self/fdinfo/%d", fd)
	f, err := os.Open(p)
	if err != nil {
		return false, fmt.Errorf("inherit: read %s: %w", p, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "lock:") && strings.Contains(line, "FLOCK") {
			return true, nil
		}
	}
	return false, sc.Err()
}

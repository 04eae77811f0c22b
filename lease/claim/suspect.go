package claim

import (
	"fmt"
	"strings"
	"time"
)

// heldDetail describes a contention: the state and, for a suspect claim, when its
// TTL ends and the command that frees it.
func (c *Claims) heldDetail(key string, r *Record, st State) string {
	if st != Suspect || r == nil || r.ExpiresAt == nil {
		return fmt.Sprintf("claim is %s", st)
	}
	now := c.now()
	ends := time.UnixMilli(*r.ExpiresAt)
	why := fmt.Sprintf("its holder's pid %d is gone from this host", r.PID)
	if !c.isSameMachine(r.Host, r.MachineID) {
		why = fmt.Sprintf("its holder runs on host %s, whose pid %d cannot be checked from here", r.Host, r.PID)
	}
	free := fmt.Sprintf("leasewrap claim release %s --holder %s", shellQuote(key), shellQuote(r.Holder))
	if root, err := rootFor(key, c.root, c.getenv); err == nil && root != "" {
		free += " --root " + shellQuote(root)
	}
	return fmt.Sprintf("claim is suspect: %s, but its TTL protects it until %s (in %v); if that run is over, free the key now with: %s",
		why, ends.UTC().Format(time.RFC3339), ends.Sub(now).Round(time.Second), free)
}

// shellSafe reports whether s is non-empty and only [A-Za-z0-9_@%+=:,./-].
func shellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_@%+=:,./-", c) >= 0) {
			return false
		}
	}
	return s != ""
}

func shellQuote(s string) string {
	if shellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

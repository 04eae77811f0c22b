package claim

import (
	"strconv"
	"strings"
)

// harnessMarkers are the ambient session markers, highest precedence
// first (fno harness_identity.HARNESS_SESSION_MARKERS).
var harnessMarkers = []struct{ env, harness string }{
	{"CODEX_THREAD_ID", "codex"},
	{"CLAUDE_CODE_SESSION_ID", "claude"},
	{"CODEX_SESSION_ID", "codex"},
	{"GEMINI_SESSION_ID", "gemini"},
	{"OPENCODE_SESSION_ID", "opencode"},
}

// ResolveHarness names the owning harness from the first marker that is
// set and not blank; "" when none is.
func ResolveHarness(getenv func(string) string) string {
	for _, m := range harnessMarkers {
		if strings.TrimSpace(getenv(m.env)) != "" {
			return m.harness
		}
	}
	return ""
}

// ParseTTLMs parses a human TTL ("1h", "30m", "3600s", bare digits) to
// milliseconds. BARE digits are SECONDS (the Python _parse_ttl / sleep
// convention). ok is false for garbage or a non-positive result.
func ParseTTLMs(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	num, mult := s, int64(1000)
	switch {
	case strings.HasSuffix(s, "h"):
		num, mult = s[:len(s)-1], 3_600_000
	case strings.HasSuffix(s, "m"):
		num, mult = s[:len(s)-1], 60_000
	case strings.HasSuffix(s, "s"):
		num = s[:len(s)-1]
	}
	v, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil {
		return 0, false
	}
	r := saturatingMul(v, mult)
	if r <= 0 {
		return 0, false
	}
	return r, true
}

func saturatingMul(a, b int64) int64 {
	const maxI, minI = int64(^uint64(0) >> 1), -int64(^uint64(0)>>1) - 1
	if a == 0 || b == 0 {
		return 0
	}
	r := a * b
	if r/b != a {
		if (a > 0) == (b > 0) {
			return maxI
		}
		return minI
	}
	return r
}

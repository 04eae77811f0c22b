package claim

import "strings"

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

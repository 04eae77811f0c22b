package claim

import "strings"

// harnessMarkers are fno's HARNESS_SESSION_MARKERS, highest precedence first.
var harnessMarkers = []struct{ env, harness string }{
	{"CODEX_THREAD_ID", "codex"},
	{"CLAUDE_CODE_SESSION_ID", "claude"},
	{"CODEX_SESSION_ID", "codex"},
	{"GEMINI_SESSION_ID", "gemini"},
	{"OPENCODE_SESSION_ID", "opencode"},
}

// ResolveHarness names the harness of the first non-blank marker, or "".
func ResolveHarness(getenv func(string) string) string {
	for _, m := range harnessMarkers {
		if strings.TrimSpace(getenv(m.env)) != "" {
			return m.harness
		}
	}
	return ""
}

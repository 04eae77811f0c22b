package claim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncodeKeyMatchesPythonQuoteSafeEmpty(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"node:ab-1234abcd", "node%3Aab-1234abcd"},
		{"a b/c", "a%20b%2Fc"},
		{"A-Z_a.z~0", "A-Z_a.z~0"},
		{"k:v", "k%3Av"}, // uppercase hex
		{"é", "%C3%A9"},
		{"走", "%E8%B5%B0"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if have := EncodeKey(tc.in); have != tc.want {
				t.Errorf("want %q, have %q", tc.want, have)
			}
			if back, ok := decodeKey(tc.want); !ok || back != tc.in {
				t.Errorf("decode %q: want %q, have %q (%v)", tc.want, tc.in, back, ok)
			}
		})
	}
}

func TestSetButEmptyClaimsRootIsUnset(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"empty claims root falls to HOME", map[string]string{"FNO_CLAIMS_ROOT": "", "HOME": "/home/x"}, "/home/x"},
		{"claims root wins", map[string]string{"FNO_CLAIMS_ROOT": "/custom", "HOME": "/home/x"}, "/custom"},
		{"neither", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if have := globalRoot(testEnv(tc.env)); have != tc.want {
				t.Errorf("want %q, have %q", tc.want, have)
			}
		})
	}
}

func TestRootRoutingRequiresColonAndKnownPrefix(t *testing.T) {
	env := testEnv(map[string]string{"HOME": "/home/x"})
	// A bare token equal to a prefix must NOT route globally.
	for _, key := range []string{"node", "walker:/repo/root"} {
		if _, err := rootFor(key, "", env); !errors.Is(err, ErrNoRoot) {
			t.Errorf("%s: want ErrNoRoot, have %v", key, err)
		}
	}
	// Explicit root always wins.
	root, err := rootFor("walker:/repo/root", "/tmp/x", env)
	if err != nil || claimsDir(root) != "/tmp/x/.fno/claims" {
		t.Errorf("want /tmp/x/.fno/claims, have %q (%v)", claimsDir(root), err)
	}
	for _, key := range []string{"node:1", "dispatch:1", "reconcile:1", "session:1"} {
		if root, err := rootFor(key, "", env); err != nil || root != "/home/x" {
			t.Errorf("%s: want /home/x, have %q (%v)", key, root, err)
		}
	}
}

func TestValidationRejectsBadInputsBeforeAnyWrite(t *testing.T) {
	c, root := newTestClaims(t)
	for _, tc := range []struct {
		name, key, holder string
		ttl               int64
		want              string
	}{
		{"empty key", "", "h", 0, "key must be non-empty"},
		{"empty holder", "k", "", 0, "holder must be non-empty"},
		{"long key", strings.Repeat("k", 257), "h", 0, "MAX_KEY_LENGTH"},
		// Worst-case 3x expansion: 100 colons is 300 encoded bytes > 240.
		{"expanding key", strings.Repeat(":", 100), "h", 0, "MAX_ENCODED_FILENAME_BYTES"},
		{"ttl low", "k", "h", 59_999, "out of range"},
		{"ttl high", "k", "h", 86_400_001, "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Acquire(t.Context(), tc.key, tc.holder, AcquireOptions{TTLMs: tc.ttl})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want ErrInvalid containing %q, have %v", tc.want, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, ".fno", "claims")); !os.IsNotExist(err) {
		t.Errorf("want no claims dir after rejected input, have %v", err)
	}
}

func TestResolveHarnessPrecedenceAndBlankIsUnset(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"highest wins", map[string]string{"CODEX_THREAD_ID": "cx", "CLAUDE_CODE_SESSION_ID": "cl"}, "codex"},
		{"blank is unset", map[string]string{"CODEX_THREAD_ID": "   ", "CLAUDE_CODE_SESSION_ID": "cl"}, "claude"},
		{"opencode", map[string]string{"OPENCODE_SESSION_ID": "ses_1"}, "opencode"},
		{"gemini", map[string]string{"GEMINI_SESSION_ID": "g"}, "gemini"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if have := ResolveHarness(testEnv(tc.env)); have != tc.want {
				t.Errorf("want %q, have %q", tc.want, have)
			}
		})
	}
}

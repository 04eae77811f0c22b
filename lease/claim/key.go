package claim

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

const (
	// MaxKeyLength caps the raw key (Python types.MAX_KEY_LENGTH), in characters.
	MaxKeyLength = 256
	// MaxEncodedFilenameBytes caps the encoded key: with ".lock" under 255 bytes.
	MaxEncodedFilenameBytes = 240
	// MinTTLMs and MaxTTLMs bound a claim's TTL in milliseconds.
	MinTTLMs = 60_000
	MaxTTLMs = 86_400_000

	claimsDirName = ".fno/claims"
	expiredSubdir = ".expired"
)

// globalIDPrefixes route a "<prefix>:<id>" key to the global claims root.
var globalIDPrefixes = []string{"node", "dispatch", "reconcile", "session"}

// EncodeKey percent-encodes key like Python's urllib.parse.quote(key, safe=""):
// [A-Za-z0-9._~-] kept, other bytes %XX, uppercase hex.
func EncodeKey(key string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '_', c == '.', c == '~', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
		}
	}
	return b.String()
}

// decodeKey reverses EncodeKey; ok is false for an invalid encoding.
func decodeKey(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] != '%' {
			b.WriteByte(name[i])
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		var v byte
		for _, c := range []byte(name[i+1 : i+3]) {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= c - '0'
			case c >= 'A' && c <= 'F':
				v |= c - 'A' + 10
			default:
				return "", false
			}
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), true
}

// ValidateKey checks a key against the protocol's bounds.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: key must be non-empty", ErrInvalid)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: key must be valid UTF-8", ErrInvalid)
	}
	if n := utf8.RuneCountInString(key); n > MaxKeyLength {
		return fmt.Errorf("%w: key length %d exceeds MAX_KEY_LENGTH=%d", ErrInvalid, n, MaxKeyLength)
	}
	if n := len(EncodeKey(key)); n > MaxEncodedFilenameBytes {
		return fmt.Errorf("%w: URL-encoded key length %d exceeds MAX_ENCODED_FILENAME_BYTES=%d", ErrInvalid, n, MaxEncodedFilenameBytes)
	}
	return nil
}

// ValidateHolder checks a holder identity.
func ValidateHolder(holder string) error {
	if holder == "" {
		return fmt.Errorf("%w: holder must be non-empty", ErrInvalid)
	}
	if !utf8.ValidString(holder) {
		return fmt.Errorf("%w: holder must be valid UTF-8", ErrInvalid)
	}
	return nil
}

// ValidateTTL checks a TTL in milliseconds against [MinTTLMs, MaxTTLMs].
func ValidateTTL(ttlMs int64) error {
	if ttlMs < MinTTLMs || ttlMs > MaxTTLMs {
		return fmt.Errorf("%w: ttl_ms=%d out of range [%d, %d]", ErrInvalid, ttlMs, MinTTLMs, MaxTTLMs)
	}
	return nil
}

// globalRoot is $FNO_CLAIMS_ROOT, else $HOME (empty counts as unset).
func globalRoot(getenv func(string) string) string {
	if r := getenv("FNO_CLAIMS_ROOT"); r != "" {
		return r
	}
	return getenv("HOME")
}

// rootFor resolves the claims root for key: the explicit root, else the global
// root for a global-id prefix; other keys need an explicit root.
func rootFor(key, explicit string, getenv func(string) string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if prefix, _, ok := strings.Cut(key, ":"); ok {
		for _, p := range globalIDPrefixes {
			if p == prefix {
				if r := globalRoot(getenv); r != "" {
					return r, nil
				}
				return "", fmt.Errorf("%w for key %q: neither $FNO_CLAIMS_ROOT nor $HOME is set; pass a root", ErrNoRoot, key)
			}
		}
	}
	return "", fmt.Errorf("%w for key %q: not a node:/dispatch:/reconcile:/session: key and no explicit root given (use --root)", ErrNoRoot, key)
}

// claimsDir is <root>/.fno/claims.
func claimsDir(root string) string { return filepath.Join(root, filepath.FromSlash(claimsDirName)) }

// claimFile is <root>/.fno/claims/<enc>.lock.
func claimFile(root, key string) string {
	return filepath.Join(claimsDir(root), EncodeKey(key)+".lock")
}

// recoveryMutex is <lockfile>.recovery.d.
func recoveryMutex(path string) string { return path + ".recovery.d" }

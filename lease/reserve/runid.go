package reserve

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// maxRunIDLen bounds a run id: it becomes a file name (plus ".lease").
const maxRunIDLen = 128

// NewRunID returns a fresh orchestratectl run id: a 26-character ULID in
// lowercase Crockford base32.
func NewRunID(now time.Time) (string, error) {
	id, err := ulid.New(ulid.Timestamp(now), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("reserve: new run id: %w", err)
	}
	return strings.ToLower(id.String()), nil
}

// ValidateRunID checks that a run id is safe to use as a path component:
// 1 to 128 bytes of [0-9A-Za-z_-] (so no "/", no "..", no NUL). Run ids
// read from records are checked too before they become paths.
func ValidateRunID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidRunID)
	}
	if len(id) > maxRunIDLen {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidRunID, len(id), maxRunIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: %q has byte %q at %d (allowed: 0-9 a-z A-Z _ -)", ErrInvalidRunID, id, c, i)
		}
	}
	return nil
}

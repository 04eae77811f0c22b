package reserve

import (
	"crypto/rand"
	"fmt"
	"io"
	"time"
)

// maxRunIDLen bounds a run id: it becomes a file name (plus ".lease").
const maxRunIDLen = 128

// NewRunID returns a fresh run id: a 26-character lowercase Crockford base32
// ULID (48 bits of Unix ms, 80 random bits).
func NewRunID(now time.Time) (string, error) {
	return newRunID(now, rand.Reader)
}

func newRunID(now time.Time, entropy io.Reader) (string, error) {
	ms := now.UnixMilli()
	if ms < 0 || ms >= 1<<48 {
		return "", fmt.Errorf("reserve: new run id: time %v is outside the ULID range (1970 to 10889)", now)
	}
	var id [16]byte
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (40 - 8*i))
	}
	if _, err := io.ReadFull(entropy, id[6:]); err != nil {
		return "", fmt.Errorf("reserve: new run id: %w", err)
	}
	// 128 bits in 26 base32 digits, the first carrying the top 3 bits.
	const digits = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford, lower case
	var out [26]byte
	var acc uint64 // bits not yet written, right-aligned
	nbits := 2     // pad: 26*5 = 130 = 128 + 2 leading zero bits
	j := 0
	for _, b := range id {
		acc = acc<<8 | uint64(b)
		nbits += 8
		for nbits >= 5 {
			nbits -= 5
			out[j] = digits[(acc>>nbits)&31]
			j++
		}
	}
	return string(out[:]), nil
}

// ValidateRunID checks a run id is 1 to 128 bytes of [0-9A-Za-z_-], safe as a
// path component; ids read from records are checked too.
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

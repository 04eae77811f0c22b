package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// ID is a session id, a canonical lowercase UUID; the zero ID is unset.
type ID struct{ s string }

// ParseID accepts only the canonical form bcode writes (36 characters, lowercase
// hex, hyphens at 8, 13, 18, 23): the id is a file name every peer must spell
// identically.
func ParseID(s string) (ID, error) {
	if err := checkCanonicalUUID(s); err != nil {
		return ID{}, fmt.Errorf("%w %q: %v (want a lowercase hyphenated UUID such as 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42)", ErrInvalidID, s, err)
	}
	return ID{s: s}, nil
}

// MustParseID is ParseID that panics on error, for constants and tests.
func MustParseID(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// NewID returns a fresh random (version 4) session id.
func NewID() ID {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("session: new id: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return ID{s: h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]}
}

// String returns the canonical form, or "" for the zero ID.
func (id ID) String() string { return id.s }

// IsZero reports whether id is unset.
func (id ID) IsZero() bool { return id.s == "" }

func checkCanonicalUUID(s string) error {
	if len(s) != 36 {
		return fmt.Errorf("length %d, want 36", len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Errorf("byte %d is %q, want '-'", i, c)
			}
		default:
			switch {
			case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
			case 'A' <= c && c <= 'F':
				return fmt.Errorf("upper-case hex digit %q at byte %d: session ids are written in lower case", c, i)
			default:
				return fmt.Errorf("byte %d is %q, want a hex digit", i, c)
			}
		}
	}
	return nil
}

package session

import "fmt"

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

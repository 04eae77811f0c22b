// Package serdejson writes JSON strings byte for byte as serde_json does and
// refuses lone surrogates as it does, for records Rust peers share.
package serdejson

import (
	"errors"
	"fmt"
)

// Writer is what WriteString writes to (*strings.Builder, *bytes.Buffer).
type Writer interface {
	WriteByte(c byte) error
	WriteString(s string) (int, error)
}

// WriteString writes s quoted as serde_json's format_escaped_str does:
// only '"', '\\' and the C0 controls are escaped (\b \t \n \f \r short,
// the rest \u00xx in lower-case hex); '<', '>', '&', DEL and non-ASCII
// are written as they are.
func WriteString(w Writer, s string) {
	const hex = "0123456789abcdef"
	w.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			w.WriteString(`\"`)
		case c == '\\':
			w.WriteString(`\\`)
		case c == '\b':
			w.WriteString(`\b`)
		case c == '\t':
			w.WriteString(`\t`)
		case c == '\n':
			w.WriteString(`\n`)
		case c == '\f':
			w.WriteString(`\f`)
		case c == '\r':
			w.WriteString(`\r`)
		case c < 0x20:
			w.WriteString(`\u00`)
			w.WriteByte(hex[c>>4])
			w.WriteByte(hex[c&0xf])
		default:
			w.WriteByte(c)
		}
	}
	w.WriteByte('"')
}

// CheckSurrogates rejects, with serde_json's messages, a \uXXXX surrogate
// escape that is not a high one followed by a low one (encoding/json would
// silently write U+FFFD). raw is a JSON document or string literal.
func CheckSurrogates[T ~string | ~[]byte](raw T) error {
	for i := 0; i+6 <= len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character
			continue
		}
		v, ok := hex4(raw[i+2 : i+6])
		if !ok {
			return fmt.Errorf("invalid escape %q", string(raw[i:i+6]))
		}
		switch {
		case v >= 0xd800 && v < 0xdc00:
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return errors.New("lone leading surrogate in hex escape")
			}
			if w, ok := hex4(raw[i+8 : i+12]); !ok || w < 0xdc00 || w > 0xdfff {
				return errors.New("lone leading surrogate in hex escape")
			}
			i += 11
		case v >= 0xdc00 && v <= 0xdfff:
			return errors.New("lone trailing surrogate in hex escape")
		default:
			i += 5
		}
	}
	return nil
}

// hex4 decodes four hex digits.
func hex4[T ~string | ~[]byte](b T) (int, bool) {
	v := 0
	for i := 0; i < 4; i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// Package serdejson writes JSON strings byte for byte as serde_json does,
// for records that Rust peers (orchestratectl, bcode) read and write.
package serdejson

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

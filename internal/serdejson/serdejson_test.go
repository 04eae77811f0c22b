package serdejson

import (
	"strings"
	"testing"
)

func TestWriteStringMatchesSerde(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         `"plain"`,
		`q"b\`:          `"q\"b\\"`,
		"\b\t\n\f\r":    `"\b\t\n\f\r"`,
		"\x00\x1f\x7f":  `"\u0000\u001f` + "\x7f\"",
		"<&>é€":         `"<&>é€"`,
		"\x01\x0b\x1a ": `"\u0001\u000b\u001a "`,
	} {
		var b strings.Builder
		WriteString(&b, in)
		if b.String() != want {
			t.Errorf("WriteString(%q): want %s, have %s", in, want, b.String())
		}
	}
}

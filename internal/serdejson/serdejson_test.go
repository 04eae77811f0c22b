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

func TestCheckSurrogatesIsSerdes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = accepted
	}{
		{`"plain \n \\ \" \u00e9"`, ""},
		{`"pair \ud83d\ude00"`, ""},
		{`"pair \uD83D\uDE00"`, ""},
		{`{"a":"\ud800"}`, "lone leading surrogate in hex escape"},
		{`"\ud800\u0041"`, "lone leading surrogate in hex escape"},
		{`"\ud800\ud800"`, "lone leading surrogate in hex escape"},
		{`"\udc00"`, "lone trailing surrogate in hex escape"},
		{`"\\ud800"`, ""}, // an escaped backslash, then text
		{`"\u12x4"`, `invalid escape "\\u12x4"`},
	} {
		err := CheckSurrogates(tc.in)
		have := ""
		if err != nil {
			have = err.Error()
		}
		if have != tc.want {
			t.Errorf("%s: want %q, have %q", tc.in, tc.want, have)
		}
		if err2 := CheckSurrogates([]byte(tc.in)); (err2 == nil) != (err == nil) {
			t.Errorf("%s: string and []byte disagree: %v vs %v", tc.in, err, err2)
		}
	}
}

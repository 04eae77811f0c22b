package pyyaml

import (
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDumpWritesWhatPyYAMLWrites(t *testing.T) {
	// Expected texts are yaml.safe_dump(m, sort_keys=False) of PyYAML 6.
	for _, tc := range []struct {
		name string
		m    Mapping
		want string
	}{
		{"empty", Mapping{}, "{}\n"},
		{"scalars", Mapping{{Key: "a", Value: "yes"}, {Key: "b", Value: big.NewInt(7)}, {Key: "c", Value: nil}, {Key: "d", Value: 1.5}, {Key: "e", Value: ""}},
			"a: 'yes'\nb: 7\nc: null\nd: 1.5\ne: ''\n"},
		{"nested", Mapping{{Key: "l", Value: []any{"x", Mapping{{Key: "k", Value: true}}}}, {Key: "m", Value: Mapping{}}},
			"l:\n- x\n- k: true\nm: {}\n"},
		{"escapes", Mapping{{Key: "u", Value: "é\n"}}, "u: \"\\xE9\\n\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have, err := Dump(tc.m)
			if err != nil || string(have) != tc.want {
				t.Fatalf("want %q, have %q (%v)", tc.want, have, err)
			}
		})
	}
	if _, err := Dump(Mapping{{Key: "", Value: 1}}); err == nil {
		t.Fatal("an empty key must be refused, as PyYAML cannot write it as a simple key")
	}
}

func TestLoadTypesAsSafeLoad(t *testing.T) {
	doc, err := Load([]byte("a: yes\nb: 0x10\nc: ~\nd: '1'\ne: 1:30\nf: [1, {g: h}]\nb2: !!str 5\na: last\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want any
	}{
		{"a", "last"}, {"b", big.NewInt(16)}, {"c", nil}, {"absent", nil}, {"d", "1"}, {"e", big.NewInt(90)},
		{"f", []any{big.NewInt(1), Mapping{{Key: "g", Value: "h"}}}}, {"b2", "5"},
	} {
		have, err := doc.Value(tc.key)
		if err != nil || !reflect.DeepEqual(have, tc.want) {
			t.Errorf("%s: want %#v, have %#v (%v)", tc.key, tc.want, have, err)
		}
	}
}

func TestLoadLimits(t *testing.T) {
	deep := strings.Repeat("[", 10) + strings.Repeat("]", 10)
	if _, err := Load([]byte("a: "+deep+"\n"), Limits{Nesting: 10}); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("want ErrTooDeep, have %v", err)
	}
	if _, err := Load([]byte("a: "+deep+"\n"), Limits{Nesting: 11}); err != nil {
		t.Fatalf("11 levels with a limit of 11: %v", err)
	}
	bomb := "a: &a [1, 2]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n"
	if _, err := Load([]byte(bomb), Limits{AliasNodes: 10}); !errors.Is(err, ErrAliasBudget) {
		t.Fatalf("want ErrAliasBudget, have %v", err)
	}
	for _, text := range []string{"", "- 1\n", "a: [\n"} {
		if _, err := Load([]byte(text), Limits{}); err == nil {
			t.Errorf("%q: want an error (not a mapping document)", text)
		}
	}
}

// FuzzStringRoundTrip: every string Dump writes reads back as the same
// string (quoted wherever a resolver would type it otherwise).
func FuzzStringRoundTrip(f *testing.F) {
	for _, samples := range pyyamlTags {
		for _, s := range samples {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // Go strings need not be UTF-8; YAML text must be
		}
		out, err := Dump(Mapping{{Key: "s", Value: s}})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		doc, err := Load(out, Limits{})
		if err != nil {
			t.Fatalf("%q written as %q does not load: %v", s, out, err)
		}
		if have, err := doc.Value("s"); err != nil || have != s {
			t.Fatalf("%q written as %q reads back as %#v (%v)", s, out, have, err)
		}
	})
}

func TestBuilderKeepsFirstPositionAndLastValue(t *testing.T) {
	var b Builder
	if m := b.Mapping(); m == nil || len(m) != 0 {
		t.Fatalf("empty builder: want an empty non-nil Mapping, have %#v", m)
	}
	b.Set("a", 1)
	b.Set("b", 2)
	b.Set("a", 3)
	want := Mapping{{Key: "a", Value: 3}, {Key: "b", Value: 2}}
	if have := b.Mapping(); !reflect.DeepEqual(have, want) {
		t.Fatalf("want %v, have %v", want, have)
	}
}

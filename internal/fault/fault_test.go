//go:build leasewrap_faults

package fault

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want map[string]int
	}{
		{"", map[string]int{}},
		{"a.b", map[string]int{"a.b": 1}},
		{"a.b@3, c", map[string]int{"a.b": 3, "c": 1}},
		{"a@0,b@x,c@2", map[string]int{"c": 2}},
	} {
		have := parse(tc.spec)
		if len(have) != len(tc.want) {
			t.Errorf("parse(%q): want %v, have %v", tc.spec, tc.want, have)
			continue
		}
		for k, v := range tc.want {
			if have[k] != v {
				t.Errorf("parse(%q)[%q]: want %d, have %d", tc.spec, k, v, have[k])
			}
		}
	}
}

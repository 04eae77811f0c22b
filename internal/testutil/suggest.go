package testutil

import (
	"slices"
	"strings"
)

// Suggested reads the fixes a refusal of leasewrap's timing check offers
// ("…; accepted instead: --kill-grace 2s, or --ttl 17s") and returns, for
// each, args with that one flag set to the suggested value (replaced
// where args has it, else added before "--"). It returns nil when msg
// offers none.
func Suggested(msg string, args []string) [][]string {
	_, fixes, ok := strings.Cut(msg, "accepted instead: ")
	if !ok {
		return nil
	}
	fixes, _, _ = strings.Cut(fixes, "\n")
	var out [][]string
	for _, fix := range strings.Split(fixes, ", or ") {
		f := strings.Fields(fix) // the flag, its value, perhaps log attributes after the last
		if len(f) < 2 || !strings.HasPrefix(f[0], "--") {
			continue
		}
		flag, value := f[0], f[1]
		a := slices.Clone(args)
		dd := slices.Index(a, "--")
		if dd < 0 {
			dd = len(a)
		}
		if i := slices.Index(a[:dd], flag); i >= 0 && i+1 < dd {
			a[i+1] = value
		} else {
			a = slices.Insert(a, dd, flag, value)
		}
		out = append(out, a)
	}
	return out
}

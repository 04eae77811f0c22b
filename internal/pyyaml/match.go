package pyyaml

import "strings"

// whole reports whether body matches s, or s without one trailing newline,
// as Python's `$` does. The matchX functions are PyYAML's resolver regexps
// by hand; match_test.go checks they agree.
func whole(s string, body func(string) bool) bool {
	if body(s) {
		return true
	}
	t, ok := strings.CutSuffix(s, "\n")
	return ok && body(t)
}

func oneOf(s string, words ...string) bool {
	for _, w := range words {
		if s == w {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// span returns the length of the longest prefix of s whose bytes all
// satisfy ok.
func span(s string, ok func(byte) bool) int {
	i := 0
	for i < len(s) && ok(s[i]) {
		i++
	}
	return i
}

func digitOrUnderscore(c byte) bool { return isDigit(c) || c == '_' }

// allOf reports whether s is non-empty and every byte satisfies ok.
func allOf(s string, ok func(byte) bool) bool {
	return s != "" && span(s, ok) == len(s)
}

// trimSign drops one leading '-' or '+' ([-+]?).
func trimSign(s string) string {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		return s[1:]
	}
	return s
}

// sexagesimal matches (?::[0-5]?[0-9])+ entirely.
func sexagesimal(s string) bool {
	if s == "" || s[0] != ':' {
		return false
	}
	for _, p := range strings.Split(s[1:], ":") {
		switch {
		case len(p) == 1 && isDigit(p[0]):
		case len(p) == 2 && '0' <= p[0] && p[0] <= '5' && isDigit(p[1]):
		default:
			return false
		}
	}
	return true
}

// exponentOpt matches (?:[eE][-+][0-9]+)? entirely.
func exponentOpt(s string) bool {
	if s == "" {
		return true
	}
	return len(s) >= 3 && (s[0] == 'e' || s[0] == 'E') && (s[1] == '-' || s[1] == '+') && allOf(s[2:], isDigit)
}

// headDigits returns the length of a [0-9][0-9_]* prefix (0: none).
func headDigits(s string) int {
	if s == "" || !isDigit(s[0]) {
		return 0
	}
	return 1 + span(s[1:], digitOrUnderscore)
}

func matchBool(s string) bool {
	return whole(s, func(t string) bool {
		return oneOf(t, "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE",
			"false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF")
	})
}

func matchMerge(s string) bool { return whole(s, func(t string) bool { return t == "<<" }) }
func matchValue(s string) bool { return whole(s, func(t string) bool { return t == "=" }) }
func matchYAML(s string) bool {
	return whole(s, func(t string) bool { return oneOf(t, "!", "&", "*") })
}
func matchNull(s string) bool {
	return whole(s, func(t string) bool { return oneOf(t, "~", "null", "Null", "NULL", "") })
}

// matchFloat is
//
//	[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
//	|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
//	|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
//	|[-+]?\.(?:inf|Inf|INF)
//	|\.(?:nan|NaN|NAN)
func matchFloat(s string) bool {
	return whole(s, func(t string) bool {
		if oneOf(t, ".nan", ".NaN", ".NAN") {
			return true
		}
		if t != "" && t[0] == '.' {
			// \.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
			if n := headDigits(t[1:]); n > 0 && exponentOpt(t[1+n:]) {
				return true
			}
		}
		u := trimSign(t)
		if oneOf(u, ".inf", ".Inf", ".INF") {
			return true
		}
		n := headDigits(u)
		if n == 0 {
			return false
		}
		rest := u[n:]
		if rest != "" && rest[0] == '.' {
			// \.[0-9_]*(?:[eE][-+][0-9]+)?
			frac := span(rest[1:], digitOrUnderscore)
			return exponentOpt(rest[1+frac:])
		}
		// (?::[0-5]?[0-9])+\.[0-9_]*
		dot := strings.IndexByte(rest, '.')
		if dot < 0 {
			return false
		}
		tail := rest[dot+1:]
		return sexagesimal(rest[:dot]) && span(tail, digitOrUnderscore) == len(tail)
	})
}

// matchInt is
//
//	[-+]?0b[0-1_]+
//	|[-+]?0[0-7_]+
//	|[-+]?(?:0|[1-9][0-9_]*)
//	|[-+]?0x[0-9a-fA-F_]+
//	|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
func matchInt(s string) bool {
	return whole(s, func(t string) bool {
		u := trimSign(t)
		switch {
		case u == "":
			return false
		case u == "0":
			return true
		case strings.HasPrefix(u, "0b") && allOf(u[2:], func(c byte) bool { return c == '0' || c == '1' || c == '_' }):
			return true
		case strings.HasPrefix(u, "0x") && allOf(u[2:], func(c byte) bool {
			return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') || c == '_'
		}):
			return true
		case u[0] == '0':
			return allOf(u[1:], func(c byte) bool { return ('0' <= c && c <= '7') || c == '_' })
		case '1' <= u[0] && u[0] <= '9':
			n := 1 + span(u[1:], digitOrUnderscore)
			return n == len(u) || sexagesimal(u[n:])
		}
		return false
	})
}

// matchTime is
//
//	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
//	|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)
//	 [0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
//	 (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?
func matchTime(s string) bool {
	return whole(s, func(t string) bool {
		// digits consumes between min and max digits and returns the rest.
		digits := func(t string, min, max int) (string, bool) {
			n := span(t, isDigit)
			if n < min {
				return t, false
			}
			if n > max {
				n = max
			}
			return t[n:], true
		}
		lit := func(t string, c byte) (string, bool) {
			if t != "" && t[0] == c {
				return t[1:], true
			}
			return t, false
		}
		ok := true
		step := func(r string, good bool) string {
			ok = ok && good
			return r
		}
		r := step(digits(t, 4, 4))
		r = step(lit(r, '-'))
		if !ok {
			return false
		}
		if len(r) == 5 && isDigit(r[0]) && isDigit(r[1]) && r[2] == '-' && isDigit(r[3]) && isDigit(r[4]) {
			return true // the date alone
		}
		r = step(digits(r, 1, 2))
		r = step(lit(r, '-'))
		r = step(digits(r, 1, 2))
		if !ok || r == "" {
			return false
		}
		if r[0] == 'T' || r[0] == 't' {
			r = r[1:]
		} else if n := span(r, func(c byte) bool { return c == ' ' || c == '\t' }); n > 0 {
			r = r[n:]
		} else {
			return false
		}
		r = step(digits(r, 1, 2))
		r = step(lit(r, ':'))
		r = step(digits(r, 2, 2))
		r = step(lit(r, ':'))
		r = step(digits(r, 2, 2))
		if !ok {
			return false
		}
		if r != "" && r[0] == '.' {
			r = r[1+span(r[1:], isDigit):]
		}
		if r == "" {
			return true
		}
		r = r[span(r, func(c byte) bool { return c == ' ' || c == '\t' }):]
		if r == "Z" {
			return true
		}
		if r == "" || (r[0] != '-' && r[0] != '+') {
			return false
		}
		r = step(digits(r[1:], 1, 2))
		if !ok {
			return false
		}
		if r == "" {
			return true
		}
		r = step(lit(r, ':'))
		r = step(digits(r, 2, 2))
		return ok && r == ""
	})
}

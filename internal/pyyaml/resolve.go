package pyyaml

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The tags of PyYAML's (YAML 1.1) implicit resolvers: the writer quotes a
// string that would resolve to another tag, the reader types plain scalars.
const (
	tagStr   = "str"
	tagBool  = "bool"
	tagInt   = "int"
	tagFloat = "float"
	tagNull  = "null"
	tagTime  = "timestamp"
	tagMerge = "merge"
	tagValue = "value"
	tagYAML  = "yaml"
)

type resolver struct {
	first string // the first characters the resolver is registered for
	match func(string) bool
	tag   string
}

// resolvers, tried in PyYAML's order among those for the first character.
var resolvers = []resolver{
	{"yYnNtTfFoO", matchBool, tagBool},
	{"-+0123456789.", matchFloat, tagFloat},
	{"-+0123456789", matchInt, tagInt},
	{"<", matchMerge, tagMerge},
	{"~nN", matchNull, tagNull},
	{"0123456789", matchTime, tagTime},
	{"=", matchValue, tagValue},
	{"!&*", matchYAML, tagYAML},
}

// resolvePlain returns the tag PyYAML gives the plain scalar s.
func resolvePlain(s string) string {
	if s == "" {
		return tagNull // the null resolver is registered for ''
	}
	r, _ := utf8.DecodeRuneInString(s)
	for _, res := range resolvers {
		if strings.ContainsRune(res.first, r) && res.match(s) {
			return res.tag
		}
	}
	return tagStr
}

// constructInt mirrors PyYAML's construct_yaml_int.
func constructInt(s string) (*big.Int, bool) {
	v := strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "_", "")
	sign := 1
	if strings.HasPrefix(v, "-") {
		sign = -1
	}
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	n := new(big.Int)
	ok := true
	switch {
	case v == "0":
	case strings.HasPrefix(v, "0b"):
		_, ok = n.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		_, ok = n.SetString(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		_, ok = n.SetString(v, 8)
	case strings.Contains(v, ":"):
		base := big.NewInt(1)
		parts := strings.Split(v, ":")
		for i := len(parts) - 1; i >= 0; i-- {
			d, err := strconv.ParseInt(parts[i], 10, 64)
			if err != nil {
				return nil, false
			}
			n.Add(n, new(big.Int).Mul(big.NewInt(d), base))
			base.Mul(base, big.NewInt(60))
		}
	default:
		_, ok = n.SetString(v, 10)
	}
	if !ok {
		return nil, false
	}
	if sign < 0 {
		n.Neg(n)
	}
	return n, true
}

// constructFloat mirrors PyYAML's construct_yaml_float.
func constructFloat(s string) (float64, bool) {
	v := strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "_", ""))
	sign := 1.0
	if strings.HasPrefix(v, "-") {
		sign = -1
	}
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), true
	case v == ".nan":
		return math.NaN(), true
	case strings.Contains(v, ":"):
		parts := strings.Split(v, ":")
		base, total := 1.0, 0.0
		for i := len(parts) - 1; i >= 0; i-- {
			d, err := strconv.ParseFloat(parts[i], 64)
			if err != nil {
				return 0, false
			}
			total += d * base
			base *= 60
		}
		return sign * total, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return sign * f, true
}

// pyFloatRepr spells f as represent_float: Python repr, lowercased, ".0" before a bare exponent.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	// Python's repr: positional when -4 <= exponent < 16, else scientific.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimPrefix(e, "-")
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			} else {
				out = digits[:exp+1] + "." + digits[exp+1:]
			}
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out = m + "e" + sign + leftPad2(strconv.Itoa(exp))
		if !strings.Contains(out, ".") {
			out = strings.Replace(out, "e", ".0e", 1)
		}
	}
	if neg {
		out = "-" + out
	}
	return out
}

func leftPad2(s string) string {
	if len(s) < 2 {
		return "0" + s
	}
	return s
}

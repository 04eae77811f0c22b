package pyyaml

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
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
	expr  string // its expression in PyYAML's resolver.py
	tag   string
}

// resolvers, tried in PyYAML's order among those for the first character.
var resolvers = []resolver{
	{"yYnNtTfFoO", `yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF`, tagBool},
	{"-+0123456789.", `[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)`, tagFloat},
	{"-+0123456789", `[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+`, tagInt},
	{"<", `<<`, tagMerge},
	{"~nN", `~|null|Null|NULL|`, tagNull},
	{"0123456789", `[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?`, tagTime},
	{"=", `=`, tagValue},
	{"!&*", `!|&|\*`, tagYAML},
}

// compiledResolvers are the resolvers' expressions, compiled on first use so
// that only runs reading or writing YAML pay for it. Python's `$` also
// matches before one trailing newline: `\n?\z`.
var compiledResolvers = sync.OnceValue(func() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(resolvers))
	for i, r := range resolvers {
		res[i] = regexp.MustCompile(`^(?:` + r.expr + `)\n?\z`)
	}
	return res
})

// resolvePlain returns the tag PyYAML gives the plain scalar s.
func resolvePlain(s string) string {
	if s == "" {
		return tagNull // the null resolver is registered for ''
	}
	r, _ := utf8.DecodeRuneInString(s)
	res := compiledResolvers()
	for i, x := range resolvers {
		if strings.ContainsRune(x.first, r) && res[i].MatchString(s) {
			return x.tag
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

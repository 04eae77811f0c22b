package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CorruptError is a previous textfile leasewrap did not write: a bad line,
// a foreign metric, or a counter that is not a count.
type CorruptError struct {
	Line int
	Text string
	Why  string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("line %d (%.60q): %s", e.Line, e.Text, e.Why)
}

// parsed is one sample line.
type parsed struct {
	line   int
	name   string
	labels []Label
	value  float64
}

// parse reads a text-format document's samples; a timestamp is refused
// (node_exporter refuses them in textfiles).
func parse(b []byte) ([]parsed, error) {
	var out []parsed
	for i, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		p, why := parseLine(t)
		if why != "" {
			return nil, &CorruptError{Line: i + 1, Text: line, Why: why}
		}
		p.line = i + 1
		out = append(out, p)
	}
	return out, nil
}

func parseLine(s string) (parsed, string) {
	var p parsed
	i := 0
	for i < len(s) && isNameChar(s[i], i == 0) {
		i++
	}
	if i == 0 {
		return p, "no metric name"
	}
	p.name, s = s[:i], s[i:]
	if strings.HasPrefix(s, "{") {
		var why string
		p.labels, s, why = parseLabels(s[1:])
		if why != "" {
			return p, why
		}
	}
	fields := strings.Fields(s)
	if len(fields) != 1 {
		return p, "want one value after the name and labels (no timestamp)"
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return p, "value " + strconv.Quote(fields[0]) + " is not a number"
	}
	p.value = v
	return p, ""
}

// parseLabels reads `name="value",…}` and returns the rest after '}'.
func parseLabels(s string) ([]Label, string, string) {
	var ls []Label
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return ls, s[1:], ""
		}
		i := 0
		for i < len(s) && isNameChar(s[i], i == 0) && s[i] != ':' {
			i++
		}
		if i == 0 {
			return nil, "", "bad label name"
		}
		name := s[:i]
		s = strings.TrimLeft(s[i:], " \t")
		if !strings.HasPrefix(s, `="`) {
			return nil, "", "label " + name + " has no quoted value"
		}
		s = s[2:]
		var v strings.Builder
		closed := false
		for j := 0; j < len(s); j++ {
			c := s[j]
			if c == '"' {
				s, closed = s[j+1:], true
				break
			}
			if c == '\\' && j+1 < len(s) {
				j++
				switch s[j] {
				case 'n':
					v.WriteByte('\n')
				case '\\', '"':
					v.WriteByte(s[j])
				default:
					return nil, "", "bad escape in label " + name
				}
				continue
			}
			v.WriteByte(c)
		}
		if !closed {
			return nil, "", "unterminated value of label " + name
		}
		ls = append(ls, Label{Name: name, Value: v.String()})
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if !strings.HasPrefix(s, "}") {
			return nil, "", "want , or } after label " + name
		}
	}
}

func isNameChar(c byte, first bool) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

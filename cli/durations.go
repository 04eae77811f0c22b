package cli

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"time"

	"github.com/alecthomas/kong"
)

// durationMapper decodes every time.Duration flag as kong's does, but a
// refused value's error says what to write instead.
type durationMapper struct{}

// Decode reads the flag's value; kong prefixes its errors with the flag.
func (durationMapper) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	flag := "--" + ctx.Value.Name
	// kong's scanner takes "-5s" for a short flag, not a value: say what
	// is wrong with it rather than suggesting --flag="-5s".
	if t := ctx.Scan.Peek(); !t.IsValue() && t.InferredType() == kong.ShortFlagToken {
		if d, err := time.ParseDuration(t.String()); err == nil && d < 0 {
			return negativeDuration(ctx.Value, flag, t.String())
		}
	}
	t, err := ctx.Scan.PopValue("duration")
	if err != nil {
		return fmt.Errorf("a duration must follow, e.g. %s 30s", flag)
	}
	v, ok := t.Value.(string)
	if !ok {
		v = fmt.Sprint(t.Value)
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil && isNumber(v):
		return fmt.Errorf("%s has no unit: write %s %ss for seconds (or %sms, %sm, %sh)", v, flag, v, v, v, v)
	case err != nil:
		return fmt.Errorf("%q is not a duration: write a number with a unit, e.g. %s 30s, 5m or 1h30m", v, flag)
	case d < 0:
		return negativeDuration(ctx.Value, flag, v)
	}
	target.Set(reflect.ValueOf(d))
	return nil
}

// negativeDuration refuses a negative value, saying what 0 means if known.
func negativeDuration(v *kong.Value, flag, value string) error {
	msg := fmt.Sprintf("%s is negative: %s takes a positive duration", value, flag)
	help := v.Help
	if v.Tag != nil {
		help = v.Tag.Help // the one-verb models drop Value.Help (cmd/leasewrap's withoutHelp)
	}
	if m := zeroMeans.FindStringSubmatch(help); m != nil {
		msg += fmt.Sprintf(" (or 0: %s)", m[1])
	}
	return fmt.Errorf("%s", msg)
}

// zeroMeans finds what a flag's help says 0 means: "(0: no limit)".
var zeroMeans = regexp.MustCompile(`(?:^|[ (])0: ([^);.]+)`)

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// Seconds is a --ttl flag as etcdctl takes it: whole seconds (--ttl 5), or
// a Go duration (5s, 1m).
type Seconds time.Duration

// Decode implements kong.MapperValue.
func (t *Seconds) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("ttl", &s); err != nil {
		return err
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/int64(time.Second) {
			return fmt.Errorf("--ttl %s: out of range", s)
		}
		*t = Seconds(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither whole seconds (30) nor a duration (30s, 2m)", s)
	}
	*t = Seconds(d)
	return nil
}

package cli

import (
	"fmt"
	"strconv"

	"github.com/alecthomas/kong"
)

// Slots is --slots N: how many holders a run verb's lease admits at once;
// the zero value means 1.
type Slots int

// N is the number of slots, at least 1.
func (s Slots) N() int { return max(int(s), 1) }

// Decode implements kong.MapperValue: --slots below 1 is usage (64).
func (s *Slots) Decode(ctx *kong.DecodeContext) error {
	var v string
	if err := ctx.Scan.PopValueInto("slots", &v); err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("--slots %s: want a whole number of holders, at least 1 (1, the default, is a plain lease)", v)
	}
	*s = Slots(n)
	return nil
}

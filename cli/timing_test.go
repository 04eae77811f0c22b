package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestTimingRefusalsAreTrue checks every timing refusal over a grid of
// TTLs, kill graces (given or the default) and renewal periods (given or
// the default): it never calls a given value the default, it advises
// renewing more often only when a period would fit before the fence, it
// always offers an alternative, and each alternative it offers is
// accepted with the other flags as they were. And every TTL from 4s
// passes with the defaults.
func TestTimingRefusalsAreTrue(t *testing.T) {
	graces := []string{"", "0s", "1s", "5s", "10s", "20s"}
	periods := []string{"", "500ms", "5s"}
	refused := 0
	for ttl := time.Second; ttl <= 40*time.Second; ttl += time.Second {
		for _, g := range graces {
			for _, p := range periods {
				args := []string{"--ttl", ttl.String()}
				if g != "" {
					args = append(args, "--kill-grace", g)
				}
				if p != "" {
					args = append(args, "--renew-every", p)
				}
				err := check(t, args)
				if g == "" && p == "" && ttl >= 4*time.Second && err != nil {
					t.Errorf("--ttl %v with the defaults: %v", ttl, err)
				}
				if err == nil {
					continue
				}
				refused++
				msg := err.Error()
				if g != "" && strings.Contains(msg, "the default --kill-grace") {
					t.Errorf("%v: a given --kill-grace called the default: %s", args, msg)
				}
				if strings.Contains(msg, "use up all") && strings.Contains(msg, "--renew-every") && !strings.Contains(msg, "--renew-every "+p) {
					t.Errorf("%v: advises renewing more often where that cannot help: %s", args, msg)
				}
				fixes := testutil.Suggested(msg, args)
				if len(fixes) == 0 {
					t.Errorf("%v: no accepted alternative: %s", args, msg)
				}
				for _, fixed := range fixes {
					if err := check(t, fixed); err != nil {
						t.Errorf("%v: suggested %v, refused again: %v (was: %s)", args, fixed, err, msg)
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no combination was refused: the grid tests nothing")
	}
}

// check runs RunFlags.Check for the flags args (--ttl, --kill-grace,
// --renew-every) as a verb would after kong parsed them.
func check(t *testing.T, args []string) error {
	t.Helper()
	f := &RunFlags{Command: []string{"true"}}
	var ttl time.Duration
	for i := 0; i+1 < len(args); i += 2 {
		d, err := time.ParseDuration(args[i+1])
		if err != nil {
			t.Fatal(err)
		}
		switch args[i] {
		case "--ttl":
			ttl = d
		case "--kill-grace":
			f.KillGrace, f.graceGiven = d, true
		case "--renew-every":
			f.RenewEvery = d
		default:
			t.Fatalf("unknown flag %s", args[i])
		}
	}
	return f.Check(ttl)
}

package renew

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock is a monotonic clock that only moves when the keeper sleeps.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }
func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.t = f.t.Add(d)
	return nil
}

func withClock(c Config, f *fakeClock) Config {
	c.now, c.sleep = f.now, f.sleep
	return c
}

var errGone = errors.New("gone")

func TestValidateRejectsTimingThatCannotWork(t *testing.T) {
	ok := func(context.Context) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{"defaults", Config{Renew: ok, TTL: time.Minute, Grace: 10 * time.Second}, ""},
		{"no ttl", Config{Renew: ok}, ""},
		{"grace equals ttl", Config{Renew: ok, TTL: time.Minute, Grace: time.Minute}, "kill grace 1m0s must be shorter than the TTL"},
		{"period equals ttl", Config{Renew: ok, TTL: time.Minute, Period: time.Minute}, "renew period 1m0s must be shorter than the TTL"},
		{"period past fence", Config{Renew: ok, TTL: time.Minute, Grace: 30 * time.Second, Period: 40 * time.Second}, "leaves no retry before the fencing deadline"},
		{"no func", Config{TTL: time.Minute}, "no renew function"},
		{"bad jitter", Config{Renew: ok, Jitter: 1}, "jitter"},
		{"negative", Config{Renew: ok, Grace: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, have %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, have %v", tc.want, err)
			}
		})
	}
}

func TestRenewsOnPeriodUntilCancelled(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ctx, cancel := context.WithCancel(context.Background())
	var at []time.Time
	cfg := withClock(Config{TTL: 90 * time.Second, Grace: 10 * time.Second, Jitter: 0.0001,
		Renew: func(context.Context) error {
			at = append(at, clk.now())
			if len(at) == 5 {
				cancel()
			}
			return nil
		}}, clk)
	if err := Run(ctx, cfg, clk.now()); err != nil {
		t.Fatalf("want nil after cancel, have %v", err)
	}
	if len(at) != 5 {
		t.Fatalf("want 5 renewals, have %d", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap > 30*time.Second || gap < 29*time.Second {
			t.Fatalf("renewal %d: want a gap of about TTL/3 = 30s, have %v", i, gap)
		}
	}
}

func TestPermanentErrorIsReturned(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	cfg := withClock(Config{TTL: time.Minute, Renew: func(context.Context) error { return errGone },
		Permanent: func(err error) bool { return errors.Is(err, errGone) }}, clk)
	if err := Run(context.Background(), cfg, clk.now()); !errors.Is(err, errGone) {
		t.Fatalf("want errGone, have %v", err)
	}
}

func TestTransientErrorsAreRetriedThenFenceBeforeExpiry(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &fakeClock{t: start}
	calls := 0
	cfg := withClock(Config{TTL: time.Minute, Grace: 10 * time.Second, Margin: 5 * time.Second,
		Renew: func(context.Context) error { calls++; return errors.New("disk stalled") }}, clk)
	err := Run(context.Background(), cfg, start)
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("want ErrFenced, have %v", err)
	}
	if fencedAt, want := clk.now().Sub(start), 45*time.Second; fencedAt != want {
		t.Fatalf("want fencing at TTL-grace-margin = %v after acquiring, have %v", want, fencedAt)
	}
	if calls < 3 {
		t.Fatalf("want several retries before fencing, have %d", calls)
	}
}

func TestSuccessAfterTransientFailureMovesTheFence(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &fakeClock{t: start}
	calls := 0
	ctx, cancel := context.WithCancel(context.Background())
	cfg := withClock(Config{TTL: time.Minute, Grace: 10 * time.Second, Margin: 5 * time.Second,
		Renew: func(context.Context) error {
			calls++
			if clk.now().Sub(start) > 3*time.Minute {
				cancel()
			}
			if calls%2 == 0 {
				return errors.New("transient")
			}
			return nil
		}}, clk)
	if err := Run(ctx, cfg, start); err != nil {
		t.Fatalf("want no fencing while every other renewal succeeds, have %v", err)
	}
}

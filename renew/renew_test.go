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

func (f *fakeClock) Now() time.Time { return f.t }

// After never fires: Renew returns at once in these tests.
func (f *fakeClock) After(time.Duration) <-chan time.Time { return nil }

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.t = f.t.Add(d)
	return nil
}

func withClock(c Config, f *fakeClock) Config {
	c.clock = f
	return c
}

var errGone = errors.New("gone")

// run is New and Keeper.Run in one call.
func run(ctx context.Context, c Config, acquired time.Time) error {
	k, err := New(c, acquired)
	if err != nil {
		return err
	}
	return k.Run(ctx)
}

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
			at = append(at, clk.Now())
			if len(at) == 5 {
				cancel()
			}
			return nil
		}}, clk)
	if err := run(ctx, cfg, clk.Now()); err != nil {
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

// renewalGaps runs a keeper with jitter j on a fake clock for n renewals
// and returns the gaps between them.
func renewalGaps(t *testing.T, j float64, n int) []time.Duration {
	t.Helper()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ctx, cancel := context.WithCancel(context.Background())
	var at []time.Time
	cfg := withClock(Config{TTL: 90 * time.Second, Grace: 10 * time.Second, Jitter: j,
		Renew: func(context.Context) error {
			if at = append(at, clk.Now()); len(at) == n {
				cancel()
			}
			return nil
		}}, clk)
	if err := run(ctx, cfg, clk.Now()); err != nil {
		t.Fatalf("jitter %v: want nil after cancel, have %v", j, err)
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	return gaps
}

func TestJitterZeroMeansNoneAndNegativeMeansDefault(t *testing.T) {
	for _, g := range renewalGaps(t, 0, 20) {
		if g != 30*time.Second {
			t.Fatalf("jitter 0: want every gap exactly TTL/3 = 30s, have %v", g)
		}
	}
	// DefaultJitter (0.1) shortens each wait by up to 3 s at random: every
	// gap lies in [27 s, 30 s], and 20 random draws are not all equal.
	gaps := renewalGaps(t, -1, 21)
	distinct := map[time.Duration]bool{}
	for _, g := range gaps {
		if g < 27*time.Second || g > 30*time.Second {
			t.Fatalf("negative jitter (default %v): want gaps in [27s, 30s], have %v", DefaultJitter, g)
		}
		distinct[g] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("negative jitter (default %v): want jittered gaps, have %d identical ones (%v)", DefaultJitter, len(gaps), gaps[0])
	}
	if err := (Config{Renew: func(context.Context) error { return nil }, Jitter: -1}).Validate(); err != nil {
		t.Fatalf("a negative jitter (the default) must be valid: %v", err)
	}
}

func TestPermanentErrorIsReturned(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	cfg := withClock(Config{TTL: time.Minute, Renew: func(context.Context) error { return errGone },
		Permanent: func(err error) bool { return errors.Is(err, errGone) }}, clk)
	if err := run(context.Background(), cfg, clk.Now()); !errors.Is(err, errGone) {
		t.Fatalf("want errGone, have %v", err)
	}
}

func TestTransientErrorsAreRetriedThenFenceBeforeExpiry(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &fakeClock{t: start}
	calls := 0
	cfg := withClock(Config{TTL: time.Minute, Grace: 10 * time.Second, Margin: 5 * time.Second,
		Renew: func(context.Context) error { calls++; return errors.New("disk stalled") }}, clk)
	err := run(context.Background(), cfg, start)
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("want ErrFenced, have %v", err)
	}
	if fencedAt, want := clk.Now().Sub(start), 45*time.Second; fencedAt != want {
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
			if clk.Now().Sub(start) > 3*time.Minute {
				cancel()
			}
			if calls%2 == 0 {
				return errors.New("transient")
			}
			return nil
		}}, clk)
	if err := run(ctx, cfg, start); err != nil {
		t.Fatalf("want no fencing while every other renewal succeeds, have %v", err)
	}
}

// A Renew that blocks forever and ignores its context (a renameat held in
// the kernel) must not postpone the fence: Run returns ErrFenced at the
// deadline, measured on the real monotonic clock. The bound is generous
// (the deadline plus two seconds), since this is a safety property, not a
// speed target.
func TestFenceDoesNotWaitForABlockedRenew(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	calls := 0
	cfg := Config{TTL: 900 * time.Millisecond, Grace: 200 * time.Millisecond, Margin: 100 * time.Millisecond,
		Period: 100 * time.Millisecond,
		Renew: func(context.Context) error {
			calls++
			if calls == 1 {
				return nil // one success moves the fence
			}
			<-block // ignores ctx
			return nil
		}}
	start := time.Now()
	k, err := New(cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- k.Run(context.Background()) }()
	limit := cfg.TTL + 2*time.Second
	select {
	case err := <-errc:
		if !errors.Is(err, ErrFenced) {
			t.Fatalf("want ErrFenced, have %v", err)
		}
	case <-time.After(limit):
		t.Fatalf("Run did not fence within %v while Renew was blocked", limit)
	}
	if !k.PastFence() {
		t.Fatalf("want PastFence after fencing")
	}
	// The fence counted from the start of the last successful attempt, so
	// it fired before the TTL could lapse for others.
	if el := time.Since(start); el >= cfg.TTL+time.Second {
		t.Logf("fenced %v after acquiring (TTL %v): machine loaded", el, cfg.TTL)
	}
}

// Each Renew gets a context that ends no later than the fencing deadline.
func TestRenewContextEndsAtTheFence(t *testing.T) {
	cfg := Config{TTL: 900 * time.Millisecond, Grace: 200 * time.Millisecond, Margin: 100 * time.Millisecond,
		Period: 100 * time.Millisecond, Timeout: time.Hour}
	var deadlines []time.Time
	cfg.Renew = func(ctx context.Context) error {
		d, ok := ctx.Deadline()
		if !ok {
			t.Error("Renew context without deadline")
		}
		deadlines = append(deadlines, d)
		<-ctx.Done()
		return ctx.Err()
	}
	start := time.Now()
	k, err := New(cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Run(context.Background()); !errors.Is(err, ErrFenced) {
		t.Fatalf("want ErrFenced, have %v", err)
	}
	fence := start.Add(cfg.TTL - cfg.Grace - cfg.Margin)
	for i, d := range deadlines {
		if d.After(fence) {
			t.Fatalf("renewal %d: want its deadline at or before the fence %v, have %v", i, fence, d)
		}
	}
	if len(deadlines) == 0 {
		t.Fatal("want at least one renewal attempt")
	}
}

// Deadline tells what a Keeper made with the same Config and start would
// use: its fence (with the default margin) and its period (TTL/3 by
// default), and no fence for a lease without TTL.
func TestDeadlineIsTheKeepersTiming(t *testing.T) {
	noop := func(context.Context) error { return nil }
	at := time.Now()
	for _, c := range []Config{
		{Renew: noop, TTL: time.Minute},
		{Renew: noop, TTL: time.Minute, Period: 5 * time.Second, Grace: 10 * time.Second, Margin: 2 * time.Second},
		{Renew: noop},
	} {
		k, err := New(c, at)
		if err != nil {
			t.Fatal(err)
		}
		fence, period := c.Deadline(at)
		if !fence.Equal(k.Fence()) {
			t.Errorf("%+v: Deadline's fence %v, the Keeper's %v", c, fence, k.Fence())
		}
		if want := c.withDefaults().Period; period != want {
			t.Errorf("%+v: Deadline's period %v, want %v", c, period, want)
		}
	}
	if fence, period := (Config{Renew: noop, TTL: time.Minute}).Deadline(at); fence.Sub(at) != time.Minute-3*time.Second || period != 20*time.Second {
		t.Errorf("TTL 1m: fence %v after the start, period %v; want 57s (margin max(1s, TTL/20)) and 20s", fence.Sub(at), period)
	}
}

// stallClock is a fakeClock whose next sleep lasts stall longer than
// asked: the process was stopped while it slept.
type stallClock struct {
	fakeClock
	stall time.Duration
}

func (s *stallClock) Sleep(ctx context.Context, d time.Duration) error {
	d, s.stall = d+s.stall, 0
	return s.fakeClock.Sleep(ctx, d)
}

// TestStallPastTheFenceIsReportedAsAStall: a keeper that wakes long past
// its fencing deadline fences at once and says it was stalled, and its
// kill deadline is where it was (last renewal + TTL - margin), not moved
// by the late wake-up.
func TestStallPastTheFenceIsReportedAsAStall(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &stallClock{fakeClock: fakeClock{t: start}, stall: 20 * time.Second}
	renewed := 0
	cfg := Config{TTL: 10 * time.Second, Grace: 2 * time.Second, Jitter: 0, Renew: func(context.Context) error { renewed++; return nil }}
	cfg.clock = clk
	k, err := New(cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	err = k.Run(context.Background())
	var fe *FenceError
	if !errors.As(err, &fe) || !errors.Is(err, ErrFenced) {
		t.Fatalf("want a *FenceError matching ErrFenced, have %v", err)
	}
	if renewed != 0 {
		t.Fatalf("want no renewal after waking past the fence, have %d", renewed)
	}
	// Fence at 10 - 2 - 1 = 7 s; woke at 3.33 + 20 s.
	if want := 23333*time.Millisecond - 7*time.Second; fe.Late < want-time.Millisecond || fe.Late > want+time.Millisecond {
		t.Fatalf("want Late ≈ %v, have %v", want, fe.Late)
	}
	if !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("want the reason to say stalled, have %q", err)
	}
	if want := start.Add(9 * time.Second); !k.KillBy().Equal(want) {
		t.Fatalf("want KillBy %v (TTL - margin after the last renewal), have %v", want, k.KillBy())
	}
}

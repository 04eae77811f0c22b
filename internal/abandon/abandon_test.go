package abandon

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAt(t *testing.T) {
	errX := errors.New("x")
	t.Run("returns", func(t *testing.T) {
		ab, err := At(context.Background(), Real{}, time.Now().Add(time.Minute), func() error { return errX })
		if ab || !errors.Is(err, errX) {
			t.Fatalf("want (false, x), have (%v, %v)", ab, err)
		}
	})
	t.Run("abandoned", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		ab, err := At(context.Background(), Real{}, time.Now().Add(10*time.Millisecond), func() error { <-release; return errX })
		if !ab || err != nil {
			t.Fatalf("want (true, nil), have (%v, %v)", ab, err)
		}
	})
	t.Run("past deadline, result ready", func(t *testing.T) {
		// A deadline already past still takes a result that is there.
		ab, err := At(context.Background(), Real{}, time.Now().Add(-time.Second), func() error { return errX })
		if ab && err != nil {
			t.Fatalf("abandoned with an error: (%v, %v)", ab, err)
		}
	})
	t.Run("no deadline, ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		release := make(chan struct{})
		defer close(release)
		time.AfterFunc(10*time.Millisecond, cancel)
		ab, err := At(ctx, Real{}, time.Time{}, func() error { <-release; return nil })
		if ab || !errors.Is(err, context.Canceled) {
			t.Fatalf("want (false, canceled), have (%v, %v)", ab, err)
		}
	})
}

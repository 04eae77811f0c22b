package reserve_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/lease/reserve"
)

// Reserve a key, lose a second reserve, release it by its owner.
func ExampleStore() {
	home, _ := os.MkdirTemp("", "octl")
	defer os.RemoveAll(home)
	s := reserve.NewStore(home)
	k := reserve.Key{Repo: "repo", Branch: "main", Key: "export-2026-11-29"}
	ctx := context.Background()
	start := uint64(1764437400)
	first := reserve.NewRecord("01runaaaaaaaaaaaaaaaaaaaaa", reserve.NewCreator(100, &start, time.Unix(int64(start), 0), ""))

	existing, _ := s.Reserve(ctx, k, first)
	fmt.Println("first reserve won:", existing == nil)
	existing, _ = s.Reserve(ctx, k, reserve.NewRecord("01runbbbbbbbbbbbbbbbbbbbbb", nil))
	fmt.Println("second reserve sees:", existing.RunID)
	out, _, _ := s.Release(ctx, k, "01runbbbbbbbbbbbbbbbbbbbbb")
	fmt.Println("release by another run:", out)
	out, _, _ = s.Release(ctx, k, first.RunID)
	fmt.Println("release by the owner:", out)
	// Output:
	// first reserve won: true
	// second reserve sees: 01runaaaaaaaaaaaaaaaaaaaaa
	// release by another run: not_owner
	// release by the owner: released
}

// The record name of a key is stable across versions.
func ExampleKeyHash() {
	fmt.Println(reserve.KeyHash("repo", "main", "key-1"))
	// Output: 374d54a7713c5c1529a2efe850ddaf06
}

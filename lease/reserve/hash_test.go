package reserve

import "testing"

// Seed: key_hash_is_stable — the golden values pin the on-disk names.
func TestKeyHashIsStable(t *testing.T) {
	cases := []struct {
		repo, branch, key, want string
	}{
		{"repo", "main", "key-1", "374d54a7713c5c1529a2efe850ddaf06"},
		{"", "", "key-1", "63e136949fd4014a7e5f1d5d18d98cc5"},
		{"repo", "main", "", "3b1adbcd4680d8f508f812409f6e4e60"},
		{"räpo", "main", "key-1", "f3b96680018fdf90bf5f9357e0ff987d"},
	}
	for _, tc := range cases {
		t.Run(tc.repo+"/"+tc.branch+"/"+tc.key, func(t *testing.T) {
			if have := KeyHash(tc.repo, tc.branch, tc.key); have != tc.want {
				t.Fatalf("want %s, have %s", tc.want, have)
			}
		})
	}
	// Length prefixes: different splits of the same bytes differ.
	if a, b := KeyHash("a", "bc", "key"), KeyHash("ab", "c", "key"); a == b {
		t.Fatalf("want different hashes for a|bc and ab|c, have %s twice", a)
	}
}

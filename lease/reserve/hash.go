package reserve

import (
	"encoding/binary"
	"fmt"
)

// The FNV-1a parameters of the orchestratectl key hash. Two 64-bit passes
// with different offsets give 128 bits; changing any of these is a
// wire-incompatible change (every persisted key would move).
const (
	fnvOffsetLow  uint64 = 0xcbf29ce484222325
	fnvOffsetHigh uint64 = 0x84222325cbf29ce4
	fnvPrime      uint64 = 0x100000001b3
)

func fnv1a64(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// KeyHash is the 32-hex-digit name of the record for (repo, branch, key).
// A missing repo or branch is the empty string. Each part is fed as its
// byte length (u64 little-endian) and then its bytes, so ("a","bc") and
// ("ab","c") differ. The result is "{high:016x}{low:016x}".
func KeyHash(repo, branch, key string) string {
	low, high := fnvOffsetLow, fnvOffsetHigh
	var n [8]byte
	for _, part := range [3]string{repo, branch, key} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
		low = fnv1a64(low, n[:])
		high = fnv1a64(high, n[:])
		low = fnv1a64(low, []byte(part))
		high = fnv1a64(high, []byte(part))
	}
	return fmt.Sprintf("%016x%016x", high, low)
}

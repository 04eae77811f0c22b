package reserve

import (
	"encoding/binary"
	"fmt"
)

// FNV-1a parameters of orchestratectl's key hash: two 64-bit passes give 128
// bits. Changing any moves every persisted key.
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

// KeyHash is the record name for (repo, branch, key), missing parts "": each part
// is fed as its u64 little-endian length then its bytes; the result is
// "{high:016x}{low:016x}".
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

// Package randbytes fills buffers with random bytes from the kernel
// (getrandom(2)), for the parts of names and ids leasewrap makes
// unpredictable: temp file names, job cgroup names, the holder suffix,
// run ids and session ids.
//
// It exists so that the local kinds' binary does not link crypto/rand,
// whose FIPS 140 machinery (a DRBG over AES-GCM, math/big) runs its
// package initialization in every leasewrap start. The bytes are the
// same: crypto/rand reads getrandom(2) too. Read is the kernel's answer
// with no user-space generator in between.
//
// Not guaranteed: anything beyond what getrandom(2) without flags gives
// (it blocks until the kernel's pool is initialized at boot, then never).
// Unlike crypto/rand.Read, a failure is returned, not a crash: callers
// decide.
package randbytes

// leasewrap is Linux-only: on another OS this import fails the build with
// one message saying so (see internal/linuxonly).
import _ "github.com/leasewrap/leasewrap/internal/linuxonly"

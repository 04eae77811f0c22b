package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCryptoInTheLocalBinary keeps crypto/rand (and with it the FIPS 140
// DRBG, AES-GCM and their package initialization in every start) out of
// the local kinds' binary: random bytes come from internal/randbytes. The
// etcd and kube executables link TLS and keep crypto.
func TestNoCryptoInTheLocalBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/leasewrap/leasewrap/cmd/leasewrap").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, p := range strings.Fields(string(out)) {
		n++
		if p == "crypto" || strings.HasPrefix(p, "crypto/") {
			t.Errorf("leasewrap links %s: take random bytes from internal/randbytes, not crypto/rand", p)
		}
	}
	if n < 50 {
		t.Fatalf("want the binary's packages, have %d: %s", n, out)
	}
}

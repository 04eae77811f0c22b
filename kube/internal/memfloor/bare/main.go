// Command bare is the memory floor of an idle kube holder on net/http,
// crypto/tls and encoding/json alone (package memfloor): bare SERVER
// CA-FILE TOKEN NAMESPACE NAME IDENTITY.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/kube/internal/memfloor"
)

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

func main() {
	a := os.Args[1:]
	if len(a) != 6 {
		fmt.Fprintln(os.Stderr, "usage: bare SERVER CA-FILE TOKEN NAMESPACE NAME IDENTITY")
		os.Exit(2)
	}
	pem, err := os.ReadFile(a[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	memfloor.Main(&http.Client{Transport: bearer{a[2], tr}}, a[0], a[3], a[4], a[5], time.Second)
}

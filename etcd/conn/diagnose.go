package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// diagnoseTLS tells a refused TLS handshake apart from an absent server,
// which gRPC hides behind a deadline: it dials each endpoint, handshakes
// with tc, and reads briefly (under TLS 1.3 a server that rejects the
// client's certificate says so only after the handshake). It returns an
// error matching ErrNoPerm for the first endpoint that refused us, or nil.
func diagnoseTLS(ctx context.Context, endpoints []string, tc *tls.Config, timeout time.Duration) error {
	for _, ep := range endpoints {
		host := ep
		if u, err := url.Parse(ep); err == nil && u.Host != "" {
			host = u.Host
		}
		d := net.Dialer{Timeout: timeout}
		raw, err := d.DialContext(ctx, "tcp", host)
		if err != nil {
			continue // unreachable, not refused
		}
		cfg := tc.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(host)
		}
		cfg.NextProtos = []string{"h2"}
		c := tls.Client(raw, cfg)
		c.SetDeadline(time.Now().Add(timeout))
		err = c.HandshakeContext(ctx)
		if err == nil {
			c.SetReadDeadline(time.Now().Add(min(timeout, 300*time.Millisecond)))
			var b [1]byte
			_, err = c.Read(b[:])
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = nil
			}
		}
		c.Close()
		if err != nil && isTLSRefusal(err) {
			return &classified{kind: ErrNoPerm, err: fmt.Errorf("TLS with %s refused: %w", ep, err)}
		}
	}
	return nil
}

func isTLSRefusal(err error) bool {
	var ae tls.AlertError
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ae) || errors.As(err, &ce) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:")
}

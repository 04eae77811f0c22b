package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// diagnoseTLS tells a refused TLS handshake apart from an absent server,
// which gRPC hides behind a deadline: it dials each endpoint, handshakes
// with tc, and reads briefly (under TLS 1.3 a server that rejects the
// client's certificate says so only after the handshake). It returns an
// error matching lease.ErrNoPerm for the first endpoint that refused us, or nil.
func diagnoseTLS(ctx context.Context, endpoints []string, tc *tls.Config, timeout time.Duration) error {
	for _, ep := range endpoints {
		host := hostOf(ep)
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
		if err != nil && isTLSRefusal(err) && !strings.Contains(err.Error(), "does not look like a TLS handshake") {
			return &classified{kind: lease.ErrNoPerm, err: fmt.Errorf("TLS with %s refused: %w", ep, err)}
		}
		if err != nil && speaksPlainHTTP2(ctx, host, timeout) {
			return &classified{kind: lease.ErrNoPerm, hint: "the endpoint is a plain (non-TLS) etcd: use http://" + host + ", or serve TLS there",
				err: fmt.Errorf("%s: TLS was asked for (https:// or --cacert/--cert) but the server speaks plain gRPC, without TLS", ep)}
		}
	}
	return nil
}

// diagnosePlain tells a TLS-only server apart from an absent one when the
// endpoints were given without TLS: it dials each endpoint and tries a
// TLS handshake only to see whether the server speaks TLS (the handshake
// is not trusted for anything and closed at once). It returns an error
// matching lease.ErrNoPerm, with the https:// hint, for the first that does.
func diagnosePlain(ctx context.Context, endpoints []string, timeout time.Duration) error {
	for _, ep := range endpoints {
		host := hostOf(ep)
		d := net.Dialer{Timeout: timeout}
		raw, err := d.DialContext(ctx, "tcp", host)
		if err != nil {
			continue
		}
		c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}) // a probe: nothing is sent over it
		c.SetDeadline(time.Now().Add(timeout))
		err = c.HandshakeContext(ctx)
		c.Close()
		var ae tls.AlertError
		if err == nil || errors.As(err, &ae) { // a TLS server: it finished the handshake, or answered with an alert
			return &classified{kind: lease.ErrNoPerm, hint: "the server speaks TLS: use https://" + host + " with --cacert (and --cert/--key if it asks for a client certificate)",
				err: fmt.Errorf("%s: the endpoint was given without TLS but the server there speaks TLS", ep)}
		}
	}
	return nil
}

// speaksPlainHTTP2 reports whether the server at host answers the HTTP/2
// client preface with a SETTINGS frame: plain gRPC, without TLS.
func speaksPlainHTTP2(ctx context.Context, host string, timeout time.Duration) bool {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	// The preface, then an empty SETTINGS frame (length 0, type 4).
	if _, err := c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")); err != nil {
		return false
	}
	var h [9]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return false
	}
	return h[3] == 0x4 // the server's SETTINGS frame
}

// hostOf is an endpoint's host:port (a URL's host, or the endpoint as given).
func hostOf(ep string) string {
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		return u.Host
	}
	return ep
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

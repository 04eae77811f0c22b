package kubelease

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/leasewrap/leasewrap/lease"
)

// connError is an API error sorted into lease.ErrUnavailable (exit 69) or
// lease.ErrNoPerm (exit 77), with a hint of what to check. The exit codes
// themselves are decided in one place, leasewrap's cli.
type connError struct {
	kind error
	err  error
	hint string
}

func (e *connError) Error() string   { return e.err.Error() + " (" + e.hint + ")" }
func (e *connError) Unwrap() []error { return []error{e.kind, e.err} }

// Classify wraps err so that it matches lease.ErrNoPerm (401, 403, TLS,
// an http:// server address at a TLS port, an exec credential plugin that
// failed) or lease.ErrUnavailable (no answer within the timeout,
// connection refused, 503, 504, an exec credential plugin that did not
// return in time) when it means that; other errors come back unchanged.
// what names the object, for the hint.
func Classify(err error, what string) error {
	if err == nil || errors.Is(err, lease.ErrNoPerm) || errors.Is(err, lease.ErrUnavailable) {
		return err
	}
	var pe *PluginError
	switch {
	case errors.As(err, &pe) && pe.Hung:
		return &connError{lease.ErrUnavailable, err, "the kubeconfig's exec credential plugin did not return within --request-timeout: run it by hand to see what it waits for"}
	case errors.As(err, &pe):
		return &connError{lease.ErrNoPerm, err, "the kubeconfig's exec credential plugin failed: run it by hand to see why"}
	case apierrors.IsUnauthorized(err):
		return &connError{lease.ErrNoPerm, err, "the API server refused the credentials (401): check --kubeconfig, --context, the token or the exec plugin"}
	case apierrors.IsForbidden(err):
		return &connError{lease.ErrNoPerm, err, fmt.Sprintf("RBAC forbids it (403): grant get, create, update and watch on leases.coordination.k8s.io for %s; see docs/KUBERNETES.md", what)}
	case plainAtTLS(err):
		return &connError{lease.ErrNoPerm, err, "the server speaks TLS: use https:// in the kubeconfig's cluster server address, with its certificate-authority"}
	case isTLS(err):
		return &connError{lease.ErrNoPerm, err, "TLS refused: check the cluster's certificate-authority and the client certificate in the kubeconfig"}
	case unavailable(err):
		return &connError{lease.ErrUnavailable, err, "the API server did not answer in time: check the kubeconfig's server, that the API server runs, and --request-timeout"}
	}
	return err
}

// plainAtTLS tells the answer of a Go TLS server (the API server) to a
// request sent without TLS: 400 "Client sent an HTTP request to an HTTPS
// server.", which client-go reports as a bad request "for an unknown
// reason" with that body as its cause.
func plainAtTLS(err error) bool {
	if !apierrors.IsBadRequest(err) {
		return false
	}
	const answer = "HTTP request to an HTTPS server"
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		if strings.Contains(s.Message, answer) {
			return true
		}
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				if strings.Contains(c.Message, answer) {
					return true
				}
			}
		}
	}
	return strings.Contains(err.Error(), answer)
}

func isTLS(err error) bool {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "x509: ") || strings.Contains(msg, "tls: ")
}

func unavailable(err error) bool {
	if apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

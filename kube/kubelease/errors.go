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
)

// The exit codes of the two connection failures, as the etcd kinds use
// them (sysexits.h).
const (
	ExitUnavailable = 69 // EX_UNAVAILABLE: the API server did not answer in time
	ExitNoPerm      = 77 // EX_NOPERM: credentials refused (401) or RBAC forbids (403)
)

var (
	// ErrUnavailable matches an error that means the API server did not
	// answer within the request timeout (or refused the connection).
	ErrUnavailable = errors.New("kubelease: API server unavailable")
	// ErrNoPerm matches an error that means the API server refused the
	// credentials, TLS failed, or RBAC forbids the verb.
	ErrNoPerm = errors.New("kubelease: permission refused")
)

// connError is an API error sorted into ErrUnavailable or ErrNoPerm; it
// carries its exit code (kong.ExitCoder, which leasewrap's exit-code
// function honours) and a hint of what to check.
type connError struct {
	kind error
	err  error
	hint string
}

func (e *connError) Error() string   { return e.err.Error() + " (" + e.hint + ")" }
func (e *connError) Unwrap() []error { return []error{e.kind, e.err} }

func (e *connError) ExitCode() int {
	if e.kind == ErrNoPerm {
		return ExitNoPerm
	}
	return ExitUnavailable
}

// Classify wraps err so that it matches ErrNoPerm (401, 403, TLS) or
// ErrUnavailable (no answer within the timeout, connection refused, 503,
// 504) when it means that; other errors come back unchanged. what names
// the object, for the hint.
func Classify(err error, what string) error {
	if err == nil || errors.Is(err, ErrNoPerm) || errors.Is(err, ErrUnavailable) {
		return err
	}
	switch {
	case apierrors.IsUnauthorized(err):
		return &connError{ErrNoPerm, err, "the API server refused the credentials (401): check --kubeconfig, --context, the token or the exec plugin"}
	case apierrors.IsForbidden(err):
		return &connError{ErrNoPerm, err, fmt.Sprintf("RBAC forbids it (403): grant get, create, update, watch (and list) on leases.coordination.k8s.io for %s; see docs/KUBERNETES.md", what)}
	case isTLS(err):
		return &connError{ErrNoPerm, err, "TLS refused: check the cluster's certificate-authority and the client certificate in the kubeconfig"}
	case unavailable(err):
		return &connError{ErrUnavailable, err, "the API server did not answer in time: check the kubeconfig's server, that the API server runs, and --request-timeout"}
	}
	return err
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

package conn

import (
	"context"
	"errors"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/leasewrap/leasewrap/lease"
)

// classified wraps an error with the kind it was sorted into.
type classified struct {
	kind error
	err  error
	hint string // what to check; "" for the kind's usual hint
}

func (e *classified) Error() string {
	if e.hint != "" {
		return e.err.Error() + " (" + e.hint + ")"
	}
	if e.kind == lease.ErrNoPerm {
		return e.err.Error() + " (check --cacert/--cert/--key, --user and the password)"
	}
	return e.err.Error() + " (check --endpoints and that etcd runs)"
}

func (e *classified) Unwrap() []error {
	return []error{e.kind, e.err}
}

// Classify wraps err so that it matches lease.ErrNoPerm (TLS,
// authentication or permission refused: exit 77) or lease.ErrUnavailable
// (no answer, deadline exceeded: exit 69) when it means that; other errors
// are returned unchanged.
func Classify(err error) error {
	if err == nil || errors.Is(err, lease.ErrNoPerm) || errors.Is(err, lease.ErrUnavailable) {
		return err
	}
	if kind := kindOf(err); kind != nil {
		return &classified{kind: kind, err: err}
	}
	return err
}

func kindOf(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed), errors.Is(err, rpctypes.ErrPermissionDenied),
		errors.Is(err, rpctypes.ErrUserEmpty), errors.Is(err, rpctypes.ErrAuthNotEnabled),
		errors.Is(err, rpctypes.ErrInvalidAuthToken), errors.Is(err, rpctypes.ErrAuthOldRevision):
		return lease.ErrNoPerm
	}
	msg := err.Error()
	for _, s := range []string{"x509:", "tls:", "authentication handshake failed", "certificate", "permission denied", "authentication failed", "user name is empty"} {
		if strings.Contains(msg, s) {
			return lease.ErrNoPerm
		}
	}
	if st, ok := status.FromError(unwrapStatus(err)); ok {
		switch st.Code() {
		case codes.PermissionDenied, codes.Unauthenticated:
			return lease.ErrNoPerm
		case codes.Unavailable, codes.DeadlineExceeded:
			return lease.ErrUnavailable
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return lease.ErrUnavailable
	}
	return nil
}

// unwrapStatus finds the innermost error carrying a gRPC status.
func unwrapStatus(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, ok := e.(interface{ GRPCStatus() *status.Status }); ok {
			return e
		}
	}
	return err
}

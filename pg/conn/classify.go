package conn

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasewrap/leasewrap/lease"
)

// classified wraps an error with the kind it was sorted into.
type classified struct {
	kind error
	err  error
}

func (e *classified) Error() string {
	if e.kind == lease.ErrNoPerm {
		return e.err.Error() + " (check the user, the password (PGPASSWORD, PGPASSFILE), sslmode and the server's pg_hba.conf and grants)"
	}
	return e.err.Error() + " (check --dsn or $DATABASE_URL or PGHOST/PGPORT, and that PostgreSQL runs)"
}

func (e *classified) Unwrap() []error { return []error{e.kind, e.err} }

// Classify wraps err so that it matches lease.ErrNoPerm (authentication,
// TLS or privilege refused: exit 77) or lease.ErrUnavailable (no answer in
// time, connection refused or cut, a server shutting down or read-only:
// exit 69) when it means that; other errors are returned unchanged.
func Classify(err error) error {
	if err == nil || errors.Is(err, lease.ErrNoPerm) || errors.Is(err, lease.ErrUnavailable) {
		return err
	}
	if kind := kindOf(err); kind != nil {
		return &classified{kind: kind, err: err}
	}
	return err
}

// Retryable reports whether err is worth another attempt on a new
// connection (possibly to another host): the network, a timeout, a
// server shutting down or in recovery, a read-only standby. It is never
// a statement's answer about the lease itself.
func Retryable(err error) bool {
	return kindOf(err) == lease.ErrUnavailable
}

func kindOf(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "28P01", pe.Code == "28000", pe.Code == "42501":
			return lease.ErrNoPerm
		case pe.Code == "25006", strings.HasPrefix(pe.Code, "57P"), strings.HasPrefix(pe.Code, "08"),
			pe.Code == "53300", pe.Code == "3D000", pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03",
			pe.Code == "55000" && strings.Contains(pe.Message, "recovery"):
			// read-only, shutdown, connection, too many clients, no such
			// database (yet, on a standby being built), serialization,
			// a standby in recovery (no timeline to read): another
			// connection, to another host, may do.
			return lease.ErrUnavailable
		}
		return nil
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err), errors.As(err, &ne) && ne.Timeout():
		return lease.ErrUnavailable
	}
	msg := err.Error()
	for _, s := range []string{"x509:", "tls: ", "certificate", "server refused TLS", "password authentication failed", "no password", "authentication failed"} {
		if strings.Contains(msg, s) && !strings.Contains(msg, "timeout") {
			return lease.ErrNoPerm
		}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.As(err, &ne) || strings.Contains(msg, "connect to PostgreSQL") ||
		strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "connection reset") ||
		strings.Contains(msg, "broken pipe") || strings.Contains(msg, "read only connection") {
		return lease.ErrUnavailable
	}
	return nil
}

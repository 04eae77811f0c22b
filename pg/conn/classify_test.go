package conn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasewrap/leasewrap/lease"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error // nil: unchanged
	}{
		{"wrong password", &pgconn.PgError{Code: "28P01"}, lease.ErrNoPerm},
		{"no pg_hba entry", &pgconn.PgError{Code: "28000"}, lease.ErrNoPerm},
		{"privilege", &pgconn.PgError{Code: "42501"}, lease.ErrNoPerm},
		{"read-only standby", &pgconn.PgError{Code: "25006"}, lease.ErrUnavailable},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, lease.ErrUnavailable},
		{"in recovery", &pgconn.PgError{Code: "55000", Message: "recovery is in progress"}, lease.ErrUnavailable},
		{"deadline", fmt.Errorf("renew: %w", context.DeadlineExceeded), lease.ErrUnavailable},
		{"tls refused", errors.New("tls error: server refused TLS connection"), lease.ErrNoPerm},
		{"tls timeout is unreachable", errors.New("tls error: timeout"), nil},
		{"syntax", &pgconn.PgError{Code: "42601"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := Classify(tc.err)
			switch {
			case tc.want == nil && have != tc.err:
				t.Fatalf("want %v unchanged, have %v", tc.err, have)
			case tc.want != nil && !errors.Is(have, tc.want):
				t.Fatalf("want %v, have %v", tc.want, have)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	if have := Redact("connect user=a password=s3cret failed", "s3cret"); have != "connect user=a password=xxxxx failed" {
		t.Fatalf("have %q", have)
	}
}

func TestParseSource(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://u:pw-from-env@h:5433/db?target_session_attrs=read-write"}
	c := Config{Getenv: func(k string) string { return env[k] }}
	cc, err := c.Parse()
	if err != nil || c.Source() != "$DATABASE_URL" || cc.Port != 5433 || cc.Password != "pw-from-env" {
		t.Fatalf("from DATABASE_URL: have %v, %s, %+v", err, c.Source(), cc)
	}
	c.DSN = "host=other port=5434 user=v"
	if cc, err = c.Parse(); err != nil || c.Source() != "--dsn" || cc.Host != "other" || cc.Port != 5434 {
		t.Fatalf("--dsn wins: have %v, %s", err, c.Source())
	}
	c.DSN = "postgres://u:s3cret@h:notaport/db"
	if _, err := c.Parse(); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a bad DSN: want an error without its password, have %v", err)
	}
}

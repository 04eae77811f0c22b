package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease"
)

func TestValidate(t *testing.T) {
	ok := Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: time.Second}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"ok", func(*Config) {}, ""},
		{"no endpoints", func(c *Config) { c.Endpoints = nil }, "no etcd endpoints"},
		{"empty endpoint", func(c *Config) { c.Endpoints = []string{"a", " "} }, "empty etcd endpoint"},
		{"no timeout", func(c *Config) { c.DialTimeout = 0 }, "--dial-timeout"},
		{"cert without key", func(c *Config) { c.Cert = "c.pem" }, "--cert and --key"},
		{"password in --user", func(c *Config) { c.User = "root:secret" }, "never on the command line"},
		{"password without user", func(c *Config) { c.Password = "x" }, "no --user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("want error containing %q, have %v", tc.want, err)
			}
		})
	}
}

func TestPasswordFromFileOrEnvAndScrub(t *testing.T) {
	getenv := func(k string) string {
		if k == EnvPassword {
			return "from-env"
		}
		return ""
	}
	if pw, _ := ReadPassword("", getenv); pw != "from-env" {
		t.Fatalf("want the environment's password, have %q", pw)
	}
	f := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(f, []byte("from-file\n"), 0o600)
	if pw, _ := ReadPassword(f, getenv); pw != "from-file" {
		t.Fatalf("want the file's password without its newline, have %q", pw)
	}
	if _, err := ReadPassword(filepath.Join(t.TempDir(), "missing"), getenv); err == nil || !strings.Contains(err.Error(), "--password-file") {
		t.Fatalf("want an error naming --password-file, have %v", err)
	}
	env := Scrub([]string{"A=1", EnvPassword + "=secret", "ETCDCTL_PASSWORDX=keep"})
	if strings.Join(env, " ") != "A=1 ETCDCTL_PASSWORDX=keep" {
		t.Fatalf("want only the password removed, have %v", env)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
		code int
	}{
		{fmt.Errorf("get: %w", rpctypes.ErrPermissionDenied), lease.ErrNoPerm, 77},
		{fmt.Errorf("auth: %w", rpctypes.ErrAuthFailed), lease.ErrNoPerm, 77},
		{errors.New("transport: authentication handshake failed: x509: certificate signed by unknown authority"), lease.ErrNoPerm, 77},
		{fmt.Errorf("probe: %w", context.DeadlineExceeded), lease.ErrUnavailable, 69},
		{errors.New("something else"), nil, 0},
	} {
		err := Classify(tc.err)
		if tc.want == nil {
			if err != tc.err {
				t.Errorf("%v: want it unchanged, have %v", tc.err, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !errors.Is(err, tc.err) || cli.ExitCode(err, io.Discard) != tc.code {
			t.Errorf("%v: want %v with exit code %d, have %v", tc.err, tc.want, tc.code, err)
		}
	}
}

// Package conn connects leasewrap-etcd to an etcd cluster the way etcdctl
// users expect (endpoints, dial timeout, TLS, user and password) and sorts
// the failures that mean "nothing can run" into two kinds: the cluster is
// unreachable (lease.ErrUnavailable, exit 69) or it refused us
// (lease.ErrNoPerm, exit 77).
//
// The password is read from the environment (ETCDCTL_PASSWORD) or from a
// file, never from the command line, and Scrub removes it from the
// environment handed to a child.
package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EnvPassword is the environment variable the password is read from (as
// etcdctl reads it). It never reaches the child.
const EnvPassword = "ETCDCTL_PASSWORD"

// Config is where and how to connect.
type Config struct {
	Endpoints   []string
	DialTimeout time.Duration
	// CACert, Cert and Key are PEM files; any of them switches TLS on.
	CACert, Cert, Key string
	// User is the user name; the password comes from Password.
	User string
	// Password is the password (read by the caller from the environment or
	// a file; see ReadPassword).
	Password string
}

// Validate rejects a configuration that cannot work.
func (c Config) Validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("no etcd endpoints (--endpoints or ETCDCTL_ENDPOINTS)")
	}
	for _, e := range c.Endpoints {
		if strings.TrimSpace(e) == "" {
			return errors.New("an empty etcd endpoint in --endpoints")
		}
	}
	if c.DialTimeout <= 0 {
		return errors.New("--dial-timeout must be positive")
	}
	if (c.Cert == "") != (c.Key == "") {
		return errors.New("--cert and --key go together")
	}
	if strings.Contains(c.User, ":") {
		return errors.New("--user takes a name only: pass the password in ETCDCTL_PASSWORD or --password-file, never on the command line")
	}
	if c.Password != "" && c.User == "" {
		return errors.New("a password was given (ETCDCTL_PASSWORD or --password-file) but no --user")
	}
	return nil
}

// CheckFiles reads the TLS files c names (--cacert, --cert, --key), as
// Dial would, so a missing or unreadable one is reported as a bad flag
// before anything is dialed.
func (c Config) CheckFiles() error {
	_, err := c.tlsConfig()
	return err
}

// ReadPassword returns the password from file (if not empty; one trailing
// newline is removed) or else from getenv(EnvPassword).
func ReadPassword(file string, getenv func(string) string) (string, error) {
	if file == "" {
		return getenv(EnvPassword), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// Scrub returns env without the password variable, for the child.
func Scrub(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, EnvPassword+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// tlsConfig builds the client TLS configuration, or nil without TLS.
func (c Config) tlsConfig() (*tls.Config, error) {
	if c.CACert == "" && c.Cert == "" {
		for _, e := range c.Endpoints {
			if strings.HasPrefix(e, "https://") {
				return &tls.Config{MinVersion: tls.VersionTLS12}, nil
			}
		}
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", c.CACert)
		}
		tc.RootCAs = pool
	}
	if c.Cert != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("--cert %s / --key %s: %w", c.Cert, c.Key, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// Dial connects and proves, within the dial timeout, that the cluster
// answers a read of probeKey (a key the caller needs to read anyway, so a
// user restricted to its own keys passes). Errors match lease.ErrUnavailable or
// lease.ErrNoPerm where they mean that. The caller closes the client.
func Dial(ctx context.Context, c Config, probeKey string) (*clientv3.Client, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	eps := make([]string, len(c.Endpoints))
	for i, e := range c.Endpoints {
		eps[i] = strings.TrimSpace(e)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   eps,
		DialTimeout: c.DialTimeout,
		TLS:         tc,
		Username:    c.User,
		Password:    c.Password,
		Logger:      zap.NewNop(),
		Context:     ctx,
		// etcd's defaults keep an idle connection checked; a dead member
		// is then noticed between renewals, not during one.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 3 * time.Second,
	})
	if err != nil {
		return nil, Classify(fmt.Errorf("connect to %s: %w", strings.Join(eps, ","), err))
	}
	pctx, cancel := context.WithTimeout(ctx, c.DialTimeout)
	defer cancel()
	if _, err := cli.Get(pctx, probeKey, clientv3.WithCountOnly()); err != nil {
		cli.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		derr := diagnosePlain(ctx, eps, c.DialTimeout)
		if tc != nil {
			derr = diagnoseTLS(ctx, eps, tc, c.DialTimeout)
		}
		if derr != nil {
			return nil, derr
		}
		return nil, Classify(fmt.Errorf("etcd at %s did not answer within --dial-timeout %v: %w", strings.Join(eps, ","), c.DialTimeout, err))
	}
	return cli, nil
}

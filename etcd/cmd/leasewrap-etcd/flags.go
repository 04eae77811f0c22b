package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/etcd/conn"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// connFlags are etcdctl's connection flags. The password is never a flag.
type connFlags struct {
	Endpoints    []string      `help:"etcd endpoints, comma-separated." env:"ETCDCTL_ENDPOINTS" default:"127.0.0.1:2379" sep:","`
	DialTimeout  time.Duration `help:"How long to wait for etcd to answer before giving up (exit 69)." env:"ETCDCTL_DIAL_TIMEOUT" default:"2s"`
	CACert       string        `name:"cacert" help:"Verify the server with this CA bundle (PEM)." env:"ETCDCTL_CACERT" type:"path"`
	Cert         string        `help:"Client certificate (PEM) for TLS client authentication." env:"ETCDCTL_CERT" type:"path"`
	Key          string        `help:"Client key (PEM) for --cert." env:"ETCDCTL_KEY" type:"path"`
	User         string        `help:"User name for authentication; the password comes from $ETCDCTL_PASSWORD or --password-file, never from the command line." env:"ETCDCTL_USER"`
	PasswordFile string        `help:"Read the password from this file (one line)." type:"path"`
}

func (f *connFlags) connConfig() (conn.Config, error) {
	pw, err := conn.ReadPassword(f.PasswordFile, os.Getenv)
	if err != nil {
		return conn.Config{}, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	c := conn.Config{Endpoints: f.Endpoints, DialTimeout: f.DialTimeout, CACert: f.CACert, Cert: f.Cert, Key: f.Key, User: f.User, Password: pw}
	if err := c.Validate(); err != nil {
		return conn.Config{}, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if err := c.CheckFiles(); err != nil {
		return conn.Config{}, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return c, nil
}

// dial connects and proves the cluster answers a read of probeKey.
func (f *connFlags) dial(ctx context.Context, probeKey string) (*clientv3.Client, error) {
	c, err := f.connConfig()
	if err != nil {
		return nil, err
	}
	return conn.Dial(ctx, c, probeKey)
}

// runFlags are leasewrap's run flags plus the etcd kinds' TTL and holder.
//
// The default TTL is 30 s: with the default kill grace (a third of the
// TTL, at most 10 s: 10 s) and margin (max(1 s, TTL/20) = 1.5 s) the fence
// falls 18.5 s after the last successful renewal, so the default period
// (TTL/3 = 10 s) leaves room for several retries after a failed renewal,
// and a SIGKILLed wrapper's lock is free again within 30 s. Shorter TTLs
// work with the defaults from 4 s on (etcdctl's own default, 10 s, gets a
// 3.333 s kill grace); 2 s is the least any kill grace and period accept.
type runFlags struct {
	TTL    cli.Seconds `help:"Lease TTL in whole seconds, as etcdctl takes it (--ttl 30) or as a duration (--ttl 30s); the server may grant more, and the granted TTL is used. At least 4 with the default --kill-grace and --renew-every, 2 with --kill-grace 0s." default:"30"`
	Holder string      `help:"Holder identity (default: leasewrap:HOST:PID:RANDOM)."`
	// WaitReportEvery is how often a waiter (--wait) says whom it still
	// waits for; hidden: a test seam, the minute is the contract.
	WaitReportEvery time.Duration `hidden:"" default:"1m"`
	cli.RunFlags
}

// MaxTTL is etcd's largest lease TTL (its lease package's MaxLeaseTTL,
// 9 000 000 000 s): a grant above it fails at the server ("too large").
const MaxTTL = 9_000_000_000 * time.Second

// MinTTL is the shortest TTL any timing accepts: the fence falls TTL −
// kill grace − a margin of at least 1 s after each renewal, so a 1 s lease
// could never be renewed before it (cli.RunFlags.Check explains the rest).
const MinTTL = 2 * time.Second

func (f *runFlags) check() error {
	ttl := f.ttl()
	if ttl < MinTTL || ttl%time.Second != 0 || ttl > MaxTTL {
		return fmt.Errorf("%w: --ttl %v must be a whole number of seconds from %d (the fence falls TTL − kill grace − a 1s safety margin after each renewal) to %d (etcd's largest lease TTL), e.g. --ttl 30", cli.ErrUsage, ttl, MinTTL/time.Second, MaxTTL/time.Second)
	}
	return f.RunFlags.Check(ttl)
}

func (f *runFlags) ttl() time.Duration { return time.Duration(f.TTL) }

func (f *runFlags) holder() string {
	if f.Holder != "" {
		return f.Holder
	}
	return cli.DefaultHolder()
}

// config is the supervisor's configuration; the child's environment is
// leasewrap's without the password.
func (f *runFlags) config(l lease.Locker, logger *slog.Logger) supervisor.Config {
	cfg := f.RunFlags.Config(l, logger)
	cfg.Env = conn.Scrub(os.Environ())
	// The leasewrap binary installed beside leasewrap-etcd, if there is
	// one, plays the job guard (both call supervisor.Gate first) without
	// the etcd client's memory; "" uses this executable.
	cfg.HelperExe = cli.Beside("leasewrap")
	cli.TrimWhenStarted(&cfg) // a sidecar: little resident while it renews
	return cfg
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

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
		return conn.Config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	c := conn.Config{Endpoints: f.Endpoints, DialTimeout: f.DialTimeout, CACert: f.CACert, Cert: f.Cert, Key: f.Key, User: f.User, Password: pw}
	if err := c.Validate(); err != nil {
		return conn.Config{}, fmt.Errorf("%w: %v", errUsage, err)
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

// defaultTTL is 30 s: with the default kill grace (10 s) and margin
// (max(1 s, TTL/20) = 1.5 s) the fence falls 18.5 s after the last
// successful renewal, so the default period (TTL/3 = 10 s) leaves room for
// several retries after a failed renewal, and a SIGKILLed wrapper's lock
// is free again within 30 s. etcdctl's own default, 10 s, cannot hold a
// 10 s kill grace.
const defaultTTL = 30 * time.Second

// runFlags are the run verbs' shared flags (as the local kinds' run verbs).
type runFlags struct {
	TTL              time.Duration `help:"Lease TTL, whole seconds (the server may grant more; the granted TTL is used)." default:"30s"`
	Wait             time.Duration `help:"Queue for this long (0: try once)." default:"0s"`
	KillGrace        time.Duration `help:"When the lease is lost, time between SIGTERM and SIGKILL of the job's process group." default:"10s"`
	RenewEvery       time.Duration `help:"Renewal period (default TTL/3)." default:"0s"`
	ConflictExitCode int           `help:"Exit code when held by another or not acquired within --wait." default:"75"`
	Subreaper        bool          `help:"Reap orphaned descendants like tini (automatic when leasewrap is PID 1)."`
	Holder           string        `help:"Holder identity (default: leasewrap:HOST:PID:RANDOM)."`

	Command []string `arg:"" passthrough:"" name:"command" help:"The command to run, after --."`
}

func (f *runFlags) validate() error {
	if len(f.Command) > 0 && f.Command[0] == "--" {
		f.Command = f.Command[1:]
	} else if len(f.Command) > 0 && strings.HasPrefix(f.Command[0], "-") {
		return fmt.Errorf("%w: unknown flag %s (the command goes after --)", errUsage, f.Command[0])
	}
	if len(f.Command) == 0 {
		return fmt.Errorf("%w: no command given; put it after --, e.g. leasewrap lock run NAME -- ./job.sh", errUsage)
	}
	if f.Wait < 0 || f.KillGrace < 0 || f.RenewEvery < 0 {
		return fmt.Errorf("%w: durations must not be negative", errUsage)
	}
	if f.TTL < time.Second || f.TTL%time.Second != 0 {
		return fmt.Errorf("%w: --ttl %v must be a whole number of seconds, at least 1s", errUsage, f.TTL)
	}
	if f.ConflictExitCode < 0 || f.ConflictExitCode > 255 {
		return fmt.Errorf("%w: --conflict-exit-code %d is not in 0..255", errUsage, f.ConflictExitCode)
	}
	if err := f.config(nil, nil).ValidateTiming(f.TTL); err != nil {
		return fmt.Errorf("%w: --ttl %v: %v", errUsage, f.TTL, err)
	}
	return nil
}

func (f *runFlags) holder() string {
	if f.Holder != "" {
		return f.Holder
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("leasewrap:%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

func (f *runFlags) config(l lease.Locker, logger *slog.Logger) supervisor.Config {
	return supervisor.Config{
		Locker:      l,
		Argv:        f.Command,
		Env:         conn.Scrub(os.Environ()), // leasewrap's password never reaches the child
		Wait:        f.Wait,
		KillGrace:   f.KillGrace,
		RenewPeriod: f.RenewEvery,
		Subreaper:   f.Subreaper,
		Logger:      logger,
	}
}

func (f *runFlags) supervise(ctx context.Context, cfg supervisor.Config) error {
	err := supervisor.Run(ctx, cfg)
	if err == nil {
		return nil
	}
	var replay *lease.ReplayError
	if errors.As(err, &replay) {
		cfg.Logger.Info("already done; replaying the recorded result, not running the command",
			"kind", replay.Kind, "key", replay.Key, "replayed", replay.Summary, "exit_code", replay.ExitCode)
	}
	return &runError{Err: err, ConflictCode: f.ConflictExitCode}
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/kube/kubelease"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/slots"
)

// defaultKillGrace replaces leasewrap's 10 s kill grace for this kind when
// --kill-grace is not given: with client-go's 15 s lease duration and the
// 1 s margin, the fence falls 9 s after the start of the last successful
// renewal, which leaves a renewal every 5 s (TTL/3) and retries between.
const defaultKillGrace = 5 * time.Second

type runCmd struct {
	objectFlags
	TTL      time.Duration `help:"Lease duration (leaseDurationSeconds), whole seconds." default:"15s"`
	Identity string        `help:"Holder identity written as holderIdentity (default: $POD_NAME or the host name, _ and a random suffix: unique per run)."`
	cli.RunFlags
}

func (c *runCmd) Help() string {
	return `Takes the Lease as client-go's leader election does (a Go controller electing
on the same object excludes it, and it excludes the controller), runs the
command with LEASEWRAP_KIND=kube, LEASEWRAP_KEY=NAMESPACE/NAME,
LEASEWRAP_HOLDER (the identity) and LEASEWRAP_FENCE (leaseTransitions after
our acquisition: a fencing token), renews it every --renew-every (default
TTL/3), stops the command (SIGTERM, then SIGKILL after --kill-grace, default
5s for this kind; exit 76) when the Lease is lost or could not be renewed in
time, and releases it as client-go's ReleaseOnCancel does when the command
ends. --wait 0 tries once; --wait D watches the Lease and takes it as soon
as it is released or expired.

--slots N allows N holders at once: the Leases NAME (slot 0), NAME-1 …
NAME-(N-1), each a client-go LeaseLock, tried in order, the first free one
held; LEASEWRAP_SLOT says which. kube holder NAME --slots N shows each.

Examples:
  leasewrap kube run nightly-report -- ./report.sh
  leasewrap kube run primary --namespace jobs --wait 1h -- ./serve
  leasewrap kube run build --slots 3 --wait 1h -- ./build.sh`
}

// Validate checks the flags before anything connects (exit 64).
func (c *runCmd) Validate(kctx *kong.Context) error {
	if err := c.objectFlags.check(); err != nil {
		return err
	}
	if c.TTL < time.Second || c.TTL%time.Second != 0 || c.TTL > (1<<31-1)*time.Second {
		return fmt.Errorf("--ttl %v must be a whole number of seconds, at least 1s (leaseDurationSeconds)", c.TTL)
	}
	if c.Slots > 1 {
		if err := kubelease.ValidName("default", leaseSlotName(c.Name, c.Slots-1)); err != nil {
			return fmt.Errorf("--slots %d: the last slot's Lease: %w", c.Slots, err)
		}
	}
	if !flagGiven(kctx, "kill-grace") {
		c.KillGrace = defaultKillGrace
	}
	return c.RunFlags.Check(c.TTL) // its messages name --ttl and --kill-grace
}

// leaseSlotName is slot i's Lease: NAME itself for slot 0 (so that
// --slots 1 is today's Lease, and a controller electing on NAME holds slot
// 0), NAME-i for the others, each a client-go LeaseLock of its own.
func leaseSlotName(name string, i int) string {
	if i == 0 {
		return name
	}
	return name + "-" + strconv.Itoa(i)
}

// flagGiven tells whether the flag was given on the command line (kong
// reports a defaulted flag as set too, so this reads the parse path).
func flagGiven(kctx *kong.Context, name string) bool {
	if kctx == nil {
		return false
	}
	for _, p := range kctx.Path {
		if p.Flag != nil && p.Flag.Name == name {
			return true
		}
	}
	return false
}

func (c *runCmd) identity() string {
	if c.Identity != "" {
		return c.Identity
	}
	return defaultIdentity(os.Getenv, os.Hostname)
}

// defaultIdentity is client-go's usual identity, the pod or host name and
// a unique suffix: $POD_NAME (the downward API) or the host name (a pod's
// host name is its name), "_", 8 random hex digits.
func defaultIdentity(getenv func(string) string, hostname func() (string, error)) string {
	name := getenv("POD_NAME")
	if name == "" {
		if h, err := hostname(); err == nil {
			name = h
		}
	}
	if name == "" {
		name = "leasewrap"
	}
	var b [4]byte
	rand.Read(b[:])
	return name + "_" + hex.EncodeToString(b[:])
}

func (c *runCmd) Run(ctx context.Context, logger *slog.Logger) error {
	cl, ns, err := c.connect()
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	identity := c.identity()
	var ls []lease.Locker
	for i := range max(c.Slots, 1) {
		l, err := kubelease.New(kubelease.Config{
			Client:         cl,
			Namespace:      ns,
			Name:           leaseSlotName(c.Name, i),
			Identity:       identity,
			TTL:            c.TTL,
			Skew:           c.Skew,
			RequestTimeout: c.RequestTimeout,
		})
		if err != nil {
			return fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
		ls = append(ls, l)
	}
	logger.Debug("kube lease", "namespace", ns, "name", c.Name, "identity", identity, "slots", len(ls))
	var l lease.Locker = ls[0]
	if len(ls) > 1 {
		if l, err = slots.New(ls); err != nil {
			return err
		}
	}
	cfg := c.RunFlags.Config(l, logger)
	// The leasewrap binary installed beside leasewrap-kube, if there is one,
	// plays the job guard (both call supervisor.Gate first) without
	// client-go's memory; "" uses this executable.
	cfg.HelperExe = cli.Beside("leasewrap")
	return c.Supervise(ctx, cfg)
}

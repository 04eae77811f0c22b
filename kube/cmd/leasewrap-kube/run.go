package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/kube/kubelease"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/slots"
)

// minTTL is the shortest lease duration any timing accepts: the fence
// falls TTL − kill grace − a margin of at least 1 s after each renewal.
// With the default kill grace and renewal period (each a third of the
// TTL) it is 4 s; cli.RunFlags.Check says which flags to change.
const minTTL = 2 * time.Second

type runCmd struct {
	objectFlags
	TTL             time.Duration `help:"Lease duration (leaseDurationSeconds), whole seconds: at least 4s with the default --kill-grace and --renew-every (each a third of it), 2s with --kill-grace 0s." default:"15s"`
	Identity        string        `help:"Holder identity written as holderIdentity (default: $POD_NAME or the host name, _ and a random suffix: unique per run)."`
	TakeCoordinated bool          `help:"Take the Lease even if its spec.strategy is set (coordinated leader election, KEP-4355, whose coordinator picks the holder), clearing the strategy as client-go's elector does when it takes over; without it such a Lease is refused (exit 65)."`
	cli.RunFlags
}

func (c *runCmd) Help() string {
	return `Takes the Lease as client-go's leader election does (a Go controller electing
on the same object excludes it, and it excludes the controller), runs the
command with LEASEWRAP_KIND=kube, LEASEWRAP_KEY=NAMESPACE/NAME,
LEASEWRAP_HOLDER (the identity) and LEASEWRAP_FENCE (leaseTransitions after
our acquisition: a fencing token), renews it every --renew-every (default
TTL/3), stops the command (--stop-signal, SIGTERM by default, then SIGKILL
after --kill-grace, default a third of the TTL: 5s for the default 15s;
exit 76) when the Lease is lost or could not be renewed in time, and releases it as client-go's
ReleaseOnCancel does when the command ends. --wait 0 tries once; --wait D
watches the Lease and takes it as soon as it is released or expired.

A Lease whose spec.strategy is set belongs to coordinated leader election
(KEP-4355): it is refused (exit 65) unless --take-coordinated; a strategy
written on the Lease while the command runs is a loss (exit 76), after
which the Lease is released to the coordinator.

--slots N allows N holders at once: the Leases NAME (slot 0), NAME-1 …
NAME-(N-1), each a client-go LeaseLock, tried in order, the first free one
held; LEASEWRAP_SLOT says which. kube holder NAME --slots N shows each.

Examples:
  leasewrap kube run nightly-report -- ./report.sh
  leasewrap kube run primary --namespace jobs --wait 1h -- ./serve
  leasewrap kube run build --slots 3 --wait 1h -- ./build.sh`
}

// Validate checks the flags before anything connects (exit 64).
func (c *runCmd) Validate() error {
	if err := c.objectFlags.check(); err != nil {
		return err
	}
	if c.TTL < minTTL || c.TTL%time.Second != 0 || c.TTL > (1<<31-1)*time.Second {
		return fmt.Errorf("--ttl %v must be a whole number of seconds (leaseDurationSeconds), at least %v: the fence falls TTL − kill grace − a 1s safety margin after each renewal", c.TTL, minTTL)
	}
	if n := c.Slots.N(); n > 1 {
		if err := kubelease.ValidName("default", leaseSlotName(c.Name, n-1)); err != nil {
			return fmt.Errorf("--slots %d: the last slot's Lease: %w", n, err)
		}
	}
	return c.RunFlags.Check(c.TTL) // its messages name --ttl, --kill-grace and --renew-every
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
	return name + "_" + cli.UniqueSuffix()
}

func (c *runCmd) Run(ctx context.Context, logger *slog.Logger) error {
	cl, ns, err := c.connect()
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	identity := c.identity()
	var ls []lease.Locker
	for i := range c.Slots.N() {
		l, err := kubelease.New(kubelease.Config{
			Client:          cl,
			Namespace:       ns,
			Name:            leaseSlotName(c.Name, i),
			Identity:        identity,
			TTL:             c.TTL,
			Skew:            c.Skew,
			RequestTimeout:  c.RequestTimeout,
			TakeCoordinated: c.TakeCoordinated,
			Logger:          logger,
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
	cli.TrimWhenStarted(&cfg) // a sidecar: little resident while it renews
	err = c.Supervise(ctx, cfg)
	if errors.Is(err, kubelease.ErrNoNamespace) {
		// The configuration names a namespace that is not there, as an
		// unknown --context is a configuration that names no context: 64.
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return err
}

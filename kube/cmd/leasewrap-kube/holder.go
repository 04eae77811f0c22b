package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/kube/kubelease"
	"github.com/leasewrap/leasewrap/lease"
)

type holderCmd struct {
	objectFlags
	Slots int `help:"Show every slot of a Lease run with --slots N (NAME, NAME-1 … NAME-(N-1)): a JSON array, one record per slot with its slot; exit 0 when any slot is held." default:"1" placeholder:"N"`
}

func (c *holderCmd) Help() string {
	return `Prints the Lease's record as JSON: namespace, name, exists, holderIdentity,
leaseDurationSeconds, acquireTime, renewTime, leaseTransitions, and held
(a holder is named and renewTime + leaseDurationSeconds + --skew is still
ahead, by this host's clock). Exit 0 when held, 1 when not held or absent,
2 on error (69 the API server did not answer, 77 refused).

Example:
  leasewrap kube holder nightly-report -n jobs | jq -r .holderIdentity`
}

// Validate checks the flags before anything connects (exit 2).
func (c *holderCmd) Validate() error {
	if c.Slots < 1 {
		return fmt.Errorf("--slots %d: at least one", c.Slots)
	}
	if err := kubelease.ValidName("default", leaseSlotName(c.Name, c.Slots-1)); err != nil {
		return err
	}
	return c.objectFlags.check()
}

// holderJSON is the Lease's record as the holder verb prints it; the
// field names are the Lease's own.
type holderJSON struct {
	Namespace            string            `json:"namespace"`
	Name                 string            `json:"name"`
	Exists               bool              `json:"exists"`
	HolderIdentity       string            `json:"holderIdentity"`
	LeaseDurationSeconds *int32            `json:"leaseDurationSeconds"`
	AcquireTime          *metav1.MicroTime `json:"acquireTime"`
	RenewTime            *metav1.MicroTime `json:"renewTime"`
	LeaseTransitions     *int32            `json:"leaseTransitions"`
	Held                 bool              `json:"held"`
	Slot                 *int              `json:"slot,omitempty"` // with --slots N > 1
}

func (c *holderCmd) Run(ctx context.Context, streams ioStreams) error {
	cl, ns, err := c.connect()
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, c.RequestTimeout)
	defer cancel()
	var outs []holderJSON
	held := false
	for i := range c.Slots {
		out, err := c.read(ctx, cl, ns, leaseSlotName(c.Name, i))
		if err != nil {
			return err
		}
		if c.Slots > 1 {
			out.Slot = &i
		}
		held = held || out.Held
		outs = append(outs, out)
	}
	var v any = outs
	if c.Slots == 1 {
		v = outs[0]
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	if _, err := fmt.Fprintln(streams.Out, string(b)); err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	if !held {
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	return nil
}

// read is the record of the Lease ns/name.
func (c *holderCmd) read(ctx context.Context, cl kubelease.LeasesGetter, ns, name string) (holderJSON, error) {
	out := holderJSON{Namespace: ns, Name: name}
	l, err := cl.Leases(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		what := fmt.Sprintf("Lease %s/%s", ns, name)
		err = kubelease.Classify(fmt.Errorf("get %s: %w", what, err), what)
		if errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrNoPerm) {
			return out, err // 69, 77 (cli.ExitCode)
		}
		return out, &cli.ExitError{Code: cli.AdminError, Err: err}
	default:
		s := l.Spec
		out.Exists = true
		if s.HolderIdentity != nil {
			out.HolderIdentity = *s.HolderIdentity
		}
		out.LeaseDurationSeconds, out.AcquireTime, out.RenewTime, out.LeaseTransitions = s.LeaseDurationSeconds, s.AcquireTime, s.RenewTime, s.LeaseTransitions
		out.Held = kubelease.Live(s, time.Now(), c.Skew)
	}
	return out, nil
}

package main

import (
	"context"
	"fmt"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/session"
	"github.com/leasewrap/leasewrap/supervisor"
)

// newMigrationStep is the pre-step of `session run --migrate`: the
// session's maintenance guard, under which the supervisor runs the
// migration like any child (the coordinator inherited, signals forwarded
// to its group, waited for). Its Handover turns the guard into the owner
// registration without a gap once the migration succeeded; if the
// migration fails or is interrupted, the guard is released and nothing is
// registered.
func newMigrationStep(owner session.LockerConfig, holder, script string) (*supervisor.Step, error) {
	ml, err := session.NewMaintenanceLocker(session.MaintenanceConfig{SessionID: owner.SessionID, Root: owner.Root, Holder: holder,
		LockWait: owner.LockWait})
	if err != nil {
		return nil, err
	}
	return &supervisor.Step{
		Locker: ml,
		Argv:   []string{"/bin/sh", "-c", script},
		Handover: func(ctx context.Context, step lease.Lease) (lease.Lease, error) {
			g, ok := step.(*session.MaintenanceLease)
			if !ok {
				return nil, fmt.Errorf("session: maintenance lease of unexpected type %T", step)
			}
			return g.Transition(ctx, owner)
		},
	}, nil
}

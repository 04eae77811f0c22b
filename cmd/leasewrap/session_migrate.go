package main

import (
	"context"
	"fmt"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/session"
	"github.com/leasewrap/leasewrap/supervisor"
)

// newMigrationStep is `session run --migrate`'s pre-step: the migration runs
// under the maintenance guard, which Handover turns into the owner
// registration without a gap on success; otherwise it is released.
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

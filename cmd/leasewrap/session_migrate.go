package main

import (
	"context"
	"fmt"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/session"
	"github.com/leasewrap/leasewrap/supervisor"
)

// migrationLocker is the pre-step of `session run --migrate`: the session's
// maintenance guard, under which the supervisor runs the migration like
// any child (the coordinator inherited, signals forwarded to its group,
// waited for). Its lease hands over to the owner registration without a
// gap once the migration succeeded (lease.Successor); if the migration
// fails or is interrupted, the guard is released and nothing is
// registered.
type migrationLocker struct {
	*session.MaintenanceLocker // Kind, Key, Holder, Notify
	owner                      session.LockerConfig
}

func newMigrationStep(owner session.LockerConfig, holder, script string) (*supervisor.Step, error) {
	ml, err := session.NewMaintenanceLocker(session.MaintenanceConfig{SessionID: owner.SessionID, Root: owner.Root, Holder: holder,
		LockWait: owner.LockWait})
	if err != nil {
		return nil, err
	}
	return &supervisor.Step{
		Locker: &migrationLocker{MaintenanceLocker: ml, owner: owner},
		Argv:   []string{"/bin/sh", "-c", script},
	}, nil
}

func (m *migrationLocker) Acquire(ctx context.Context) (lease.Lease, error) {
	ls, err := m.MaintenanceLocker.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	g, ok := ls.(*session.MaintenanceLease)
	if !ok {
		return nil, fmt.Errorf("session: maintenance lease of unexpected type %T", ls)
	}
	return &migrationLease{MaintenanceLease: g, owner: m.owner}, nil
}

// migrationLease is the held guard; Next turns it into the owner lease.
type migrationLease struct {
	*session.MaintenanceLease
	owner session.LockerConfig
}

var _ lease.Successor = (*migrationLease)(nil)

func (l *migrationLease) Next(ctx context.Context) (lease.Lease, error) {
	return l.Transition(ctx, l.owner)
}

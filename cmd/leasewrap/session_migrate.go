package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/session"
)

// migrateLocker is the session kind with a migration in front: Acquire
// takes the maintenance guard, runs the migration under it (the migration
// inherits the locked coordinator), and on success turns the guard into an
// owner registration without a gap. The supervisor then starts the main
// command under that owner lease.
type migrateLocker struct {
	*session.Locker // Kind, Key, Holder, Anchored, Watches of the owner
	maint           *session.MaintenanceLocker
	owner           session.LockerConfig
	script          string
	grace           time.Duration
	log             *slog.Logger
}

func newMigrateLocker(owner session.LockerConfig, script string, grace time.Duration, log *slog.Logger) (*migrateLocker, error) {
	ol, err := session.NewLocker(owner)
	if err != nil {
		return nil, err
	}
	ml, err := session.NewMaintenanceLocker(session.MaintenanceConfig{SessionID: owner.SessionID, Root: owner.Root, Holder: ol.Holder()})
	if err != nil {
		return nil, err
	}
	return &migrateLocker{Locker: ol, maint: ml, owner: owner, script: script, grace: grace, log: log}, nil
}

// migrationFailed reports a migration that did not succeed: nothing was
// registered and the main command did not run; leasewrap exits with the
// migration's status.
type migrationFailed struct{ code int }

func (e *migrationFailed) Error() string {
	return fmt.Sprintf("migration failed with status %d; nothing registered, the command did not run", e.code)
}

func (e *migrationFailed) ExitCode() int { return e.code }

func (m *migrateLocker) Acquire(ctx context.Context, _ int) (lease.Lease, error) {
	ml, err := m.maint.Acquire(ctx, 0)
	if err != nil {
		return nil, err
	}
	guard := ml.(*session.MaintenanceLease)
	m.log.Info("maintenance guard taken; migrating", "session", m.Key(), "migrate", m.script)
	if err := m.migrate(ctx, guard); err != nil {
		guard.Finish(context.WithoutCancel(ctx), lease.Result{})
		return nil, err
	}
	return guard.Transition(ctx, m.owner)
}

// migrate runs the migration script with the coordinator inherited. A
// cancelled ctx (a signal to leasewrap) sends it SIGTERM, then SIGKILL
// after the grace.
func (m *migrateLocker) migrate(ctx context.Context, guard *session.MaintenanceLease) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", m.script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	inherit.Attach(cmd, os.Environ(), inherit.Handover{
		Kind: m.maint.Kind(), Key: m.Key(), Holder: m.Holder(), File: guard.File(), Env: guard.Env(),
	})
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = m.grace
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &migrationFailed{code: code}
	}
	return fmt.Errorf("migration: %w", err)
}

package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

func lockerConfig(root string, sid ID, instance string, epoch uint32) LockerConfig {
	return LockerConfig{SessionID: sid, Root: root, OwnerContext: testContext(instance, epoch)}
}

func TestNewLockerValidates(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	noEpoch := lockerConfig(root, sid, "a", 6)
	noEpoch.StorageWriterEpoch = nil
	noRoot := lockerConfig("", sid, "a", 6)
	noID := lockerConfig(root, ID{}, "a", 6)
	tests := []struct {
		name string
		cfg  LockerConfig
		want string
	}{
		{"missing epoch", noEpoch, "writer epoch"},
		{"missing root", noRoot, "root"},
		{"missing id", noID, "session id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewLocker(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error about %s, have %v", tt.want, err)
			}
		})
	}
	l, err := NewLocker(lockerConfig(root, sid, "a", 6))
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind() != "session" || l.Key() != sid.String() || l.Holder() != "a" {
		t.Errorf("want session/%s/a, have %s/%s/%s", sid, l.Kind(), l.Key(), l.Holder())
	}
	w, err := l.Notify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if fi, err := os.Stat(NewStore(root).OwnerDir(sid)); err != nil || !fi.IsDir() {
		t.Errorf("want the watched owner dir created, have %v", err)
	}
}

func TestLockerLeaseLifecycle(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	l, _ := NewLocker(lockerConfig(root, sid, "daemon-a", 6))
	ls, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ol := ls.(*ownerLease)
	o := ol.Owner()
	if have := classifyLiveness(ol.Path(), &o); have != Live {
		t.Fatalf("want live, have %v", have)
	}
	if ls.(lease.FileHolder).File() == nil || ls.TTL() != 0 {
		t.Fatalf("want a file and TTL 0, have %v %v", ls.(lease.FileHolder).File(), ls.TTL())
	}
	env := strings.Join(ls.Env(), " ")
	for _, want := range []string{"LEASEWRAP_SESSION_ID=" + sid.String(), "LEASEWRAP_LEASE_TOKEN=" + o.LeaseToken} {
		if !strings.Contains(env, want) {
			t.Errorf("want env %s, have %s", want, env)
		}
	}
	if err := ls.Renew(context.Background()); err != nil {
		t.Fatalf("want renew ok, have %v", err)
	}
	if err := ls.Finish(context.Background(), lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if exists(ol.Path()) {
		t.Errorf("want the record removed by Finish, %s exists", ol.Path())
	}
}

func TestLockerRenewDetectsLoss(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, path string, o Owner)
	}{
		{"removed", func(t *testing.T, path string, _ Owner) { os.Remove(path) }},
		{"other token", func(t *testing.T, path string, o Owner) {
			o.LeaseToken = "someone-else"
			writePretty(t, path, &o)
		}},
		{"corrupted", func(t *testing.T, path string, _ Owner) { os.WriteFile(path, []byte("{"), 0o666) }},
		{"replaced with our token", func(t *testing.T, path string, o Owner) {
			os.Remove(path)
			writePretty(t, path, &o)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := NewLocker(lockerConfig(t.TempDir(), NewID(), "a", 6))
			ls, err := l.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ol := ls.(*ownerLease)
			tt.spoil(t, ol.Path(), ol.Owner())
			if err := ls.Renew(context.Background()); !errors.Is(err, lease.ErrLost) {
				t.Fatalf("want ErrLost, have %v", err)
			}
			before, _ := os.ReadFile(ol.Path())
			ls.Finish(context.Background(), lease.Result{Lost: true})
			after, _ := os.ReadFile(ol.Path())
			if tt.name == "other token" || tt.name == "corrupted" {
				if !exists(ol.Path()) || string(before) != string(after) {
					t.Errorf("want a record that is not ours left untouched by Finish")
				}
			}
		})
	}
}

func TestLockerMapsErrors(t *testing.T) {
	t.Run("incompatible live owner is held", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		oc := testContext("daemon-a", 6)
		oc.Endpoint = Some("unix:///run/a.sock")
		mustAcquire(t, NewStore(root), sid, oc)
		l, _ := NewLocker(lockerConfig(root, sid, "daemon-b", 6))
		_, err := l.Acquire(context.Background())
		var held *lease.HeldError
		if !errors.As(err, &held) {
			t.Fatalf("want *lease.HeldError, have %T: %v", err, err)
		}
		if held.Holder != "daemon-a" || held.PID != os.Getpid() || held.Kind != "session" || held.Key != sid.String() {
			t.Errorf("want holder daemon-a pid %d, have %+v", os.Getpid(), held)
		}
		if !strings.Contains(held.Detail, "daemon instance daemon-a") || !strings.Contains(held.Detail, "endpoint unix:///run/a.sock") {
			t.Errorf("want the seed's owner summary in Detail, have %q", held.Detail)
		}
	})
	t.Run("busy coordinator is held", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		s := NewStore(root)
		f, _ := openLockFile(s.LockPath(sid))
		defer f.Close()
		flock(f, lockEX)
		l, _ := NewLocker(lockerConfig(root, sid, "a", 6))
		l.store.lockBudget = 100 * time.Millisecond
		_, err := l.Acquire(context.Background())
		var held *lease.HeldError
		if !errors.As(err, &held) || !strings.Contains(held.Detail, s.LockPath(sid)) {
			t.Fatalf("want *lease.HeldError naming the coordinator, have %v", err)
		}
	})
	t.Run("LockWait bounds the coordinator wait", func(t *testing.T) {
		root, sid := t.TempDir(), NewID()
		s := NewStore(root)
		f, _ := openLockFile(s.LockPath(sid))
		defer f.Close()
		flock(f, lockEX) // maintenance holds the coordinator
		cfg := lockerConfig(root, sid, "a", 6)
		cfg.LockWait = TryOnceLockWait
		l, err := NewLocker(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if l.store.lockBudget != TryOnceLockWait {
			t.Fatalf("want the store's budget %v, have %v", TryOnceLockWait, l.store.lockBudget)
		}
		_, err = l.Acquire(context.Background())
		var held *lease.HeldError
		if !errors.As(err, &held) || !strings.Contains(held.Detail, "busy for") {
			t.Fatalf("want *lease.HeldError for the busy coordinator, have %v", err)
		}
		// The detail reports the wait actually made: at least the budget,
		// and never the seed's 10 s.
		if waited := parseWaited(t, held.Detail); waited < TryOnceLockWait || waited >= LockWaitBudget {
			t.Fatalf("want a wait of at least %v and under the seed's %v, have %v (%s)", TryOnceLockWait, LockWaitBudget, waited, held.Detail)
		}
		def, _ := NewLocker(lockerConfig(root, sid, "b", 6))
		if def.store.lockBudget != LockWaitBudget {
			t.Fatalf("LockWait 0: want the seed's budget %v, have %v", LockWaitBudget, def.store.lockBudget)
		}
		ml, err := NewMaintenanceLocker(MaintenanceConfig{SessionID: sid, Root: root, LockWait: TryOnceLockWait})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ml.Acquire(context.Background()); !errors.As(err, &held) {
			t.Fatalf("maintenance with LockWait: want *lease.HeldError for the busy coordinator, have %v", err)
		}
		if waited := parseWaited(t, held.Detail); waited < TryOnceLockWait || waited >= LockWaitBudget {
			t.Fatalf("maintenance: want a wait of at least %v and under %v, have %v", TryOnceLockWait, LockWaitBudget, waited)
		}
	})
	refused := map[string]func(t *testing.T, s *Store, sid ID) string{
		"malformed record": func(t *testing.T, s *Store, sid ID) string {
			p := ownerDirFile(t, s, sid, "x.json")
			os.WriteFile(p, []byte("not-json"), 0o666)
			return p
		},
		"unknown schema": func(t *testing.T, s *Store, sid ID) string {
			o := testOwner(sid, testContext("future", 6))
			o.SchemaVersion = 4
			return placeOwner(t, s, sid, &o)
		},
		"directory at a record path": func(t *testing.T, s *Store, sid ID) string {
			p := filepath.Join(s.OwnerDir(sid), "d.json")
			os.MkdirAll(p, 0o777)
			return p
		},
	}
	for name, plant := range refused {
		t.Run(name+" is refused", func(t *testing.T) {
			root, sid := t.TempDir(), NewID()
			p := plant(t, NewStore(root), sid)
			before, _ := os.Lstat(p)
			for _, l := range []lease.Locker{
				mustLocker(t, lockerConfig(root, sid, "a", 6)),
				mustMaintenanceLocker(t, MaintenanceConfig{SessionID: sid, Root: root}),
			} {
				_, err := l.Acquire(context.Background())
				if !errors.Is(err, lease.ErrRefused) || errors.Is(err, lease.ErrHeld) {
					t.Fatalf("%s: want ErrRefused, have %v", l.Kind(), err)
				}
				if !strings.Contains(err.Error(), p) {
					t.Errorf("want the error to name %s, have %v", p, err)
				}
			}
			after, err := os.Lstat(p)
			if err != nil || !os.SameFile(before, after) || before.ModTime() != after.ModTime() {
				t.Errorf("want %s untouched, have %v", p, err)
			}
		})
	}
}

func mustLocker(t *testing.T, cfg LockerConfig) *Locker {
	t.Helper()
	l, err := NewLocker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustMaintenanceLocker(t *testing.T, cfg MaintenanceConfig) *MaintenanceLocker {
	t.Helper()
	l, err := NewMaintenanceLocker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestMaintenanceLockerAndTransition(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	s := NewStore(root)
	ml := mustMaintenanceLocker(t, MaintenanceConfig{SessionID: sid, Root: root, Holder: "migrator"})
	if ml.Kind() != "session-maintenance" || ml.Holder() != "migrator" {
		t.Errorf("want session-maintenance/migrator, have %s/%s", ml.Kind(), ml.Holder())
	}
	ls, err := ml.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if active, _ := s.MaintenanceIsActive(sid); !active {
		t.Fatal("want maintenance active while the lease is held")
	}
	if err := ls.Renew(context.Background()); err != nil {
		t.Fatalf("want renew ok, have %v", err)
	}
	// A second maintenance attempt meets the busy coordinator: held.
	other := mustMaintenanceLocker(t, MaintenanceConfig{SessionID: sid, Root: root})
	other.store.lockBudget = 50 * time.Millisecond
	if _, err := other.Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("want ErrHeld, have %v", err)
	}
	owner, err := ls.(*MaintenanceLease).Transition(context.Background(), LockerConfig{OwnerContext: testContext("after-migration", 6)})
	if err != nil {
		t.Fatal(err)
	}
	if active, _ := s.MaintenanceIsActive(sid); active {
		t.Error("want the coordinator released after the transition")
	}
	owners, _ := s.ActiveOwners(sid)
	if len(owners) != 1 || *owners[0].DaemonInstanceID != "after-migration" {
		t.Fatalf("want one owner after-migration, have %+v", owners)
	}
	// The transitioned owner refuses maintenance: held, with its identity.
	_, err = other.Acquire(context.Background())
	var held *lease.HeldError
	if !errors.As(err, &held) || held.Holder != "after-migration" {
		t.Fatalf("want held by after-migration, have %v", err)
	}
	owner.Finish(context.Background(), lease.Result{})

	// A failed transition releases the coordinator and registers nothing.
	ls, err = ml.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bad := LockerConfig{OwnerContext: testContext("x", 6)}
	bad.StorageWriterEpoch = nil
	if _, err := ls.(*MaintenanceLease).Transition(context.Background(), bad); !errors.Is(err, lease.ErrRefused) {
		t.Fatalf("want ErrRefused for a missing epoch, have %v", err)
	}
	if active, _ := s.MaintenanceIsActive(sid); active {
		t.Error("want the coordinator released after a failed transition")
	}
	if owners, _ := s.ActiveOwners(sid); len(owners) != 0 {
		t.Errorf("want nothing registered, have %d", len(owners))
	}
}

// TestInheritedDescriptorsOutliveLeasewrap: the supervisor hands File() to
// the child and closes its own copy (or is SIGKILLed); the child's copy
// alone keeps the owner live and maintenance active.
func TestInheritedDescriptorsOutliveLeasewrap(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	s := NewStore(root)
	l := mustLocker(t, lockerConfig(root, sid, "a", 6))
	ls, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ol := ls.(*ownerLease)
	o := ol.Owner()
	child := testutil.Sleeper(t, ls.(lease.FileHolder).File())
	ls.(lease.FileHolder).File().Close() // leasewrap's copy gone, as after a SIGKILL
	if have := classifyLiveness(ol.Path(), &o); have != Live {
		t.Errorf("want live while the child holds the descriptor, have %v", have)
	}
	child.Kill(t, helperWait)
	if have := classifyLiveness(ol.Path(), &o); have != Stale {
		t.Errorf("want stale once the child died, have %v", have)
	}

	ml := mustMaintenanceLocker(t, MaintenanceConfig{SessionID: sid, Root: root})
	ms, err := ml.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	child = testutil.Sleeper(t, ms.(lease.FileHolder).File())
	ms.Finish(context.Background(), lease.Result{})
	if active, _ := s.MaintenanceIsActive(sid); !active {
		t.Error("want maintenance active while the migration child holds the coordinator")
	}
	child.Kill(t, helperWait)
	if active, _ := s.MaintenanceIsActive(sid); active {
		t.Error("want maintenance over once the child died")
	}
}

// A symlink planted where the coordinator lock belongs is refused (its
// target is neither created nor locked), and the refusal is ErrRefused.
func TestLockerRefusesASymlinkedCoordinator(t *testing.T) {
	root := t.TempDir()
	sid := NewID()
	s := NewStore(root)
	if err := os.MkdirAll(filepath.Dir(s.LockPath(sid)), 0o777); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "planted")
	if err := os.Symlink(target, s.LockPath(sid)); err != nil {
		t.Fatal(err)
	}
	l, err := NewLocker(LockerConfig{SessionID: sid, Root: root, OwnerContext: DefaultOwnerContext()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(context.Background()); !errors.Is(err, lease.ErrRefused) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("want a refusal naming the symlink, have %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("the symlink's target was created: %v", err)
	}
}

// parseWaited reads the duration out of a busy coordinator's detail
// ("... busy for 500ms (...)").
func parseWaited(t *testing.T, detail string) time.Duration {
	t.Helper()
	_, rest, ok := strings.Cut(detail, "busy for ")
	if !ok {
		t.Fatalf("no wait in %q", detail)
	}
	d, err := time.ParseDuration(strings.Fields(rest)[0])
	if err != nil {
		t.Fatalf("wait in %q: %v", detail, err)
	}
	return d
}

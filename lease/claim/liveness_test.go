package claim

import (
	"os"
	"testing"
)

func TestLivenessMatchesPythonClassifyIncludingHybridArm(t *testing.T) {
	c, _ := newTestClaims(t)
	me := os.Getpid()
	host := systemHostname()
	now := nowMs()
	for _, tc := range []struct {
		name string
		rec  *Record
		want State
	}{
		{"pid claim, own live pid", record(me, now, nil, host), Live},
		{"pid reuse: acquired before the process started", record(me, 1, nil, host), Stale},
		{"cross-host is never live", record(me, now, nil, "elsewhere.example"), Stale},
		{"unexpired ttl, live pid", record(me, now, i64Ptr(now+60_000), host), Live},
		{"suspect: unexpired ttl, dead pid", record(-1, now, i64Ptr(now+60_000), host), Suspect},
		{"suspect: unexpired ttl, foreign host", record(me, now, i64Ptr(now+60_000), "elsewhere.example"), Suspect},
		{"hybrid: expired ttl, live pid", record(me, now, i64Ptr(now-1), host), Live},
		{"expired ttl, dead pid", record(-1, now, i64Ptr(now-1), host), Stale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if have := c.Classify(tc.rec, now); have != tc.want {
				t.Errorf("want %s, have %s", tc.want, have)
			}
		})
	}
}

func TestOwnProcessCreateTimeIsSane(t *testing.T) {
	create, ok := processCreateTimeMs(os.Getpid())
	if !ok {
		t.Fatal("must be able to inspect our own pid")
	}
	now := nowMs()
	if create > now {
		t.Errorf("create %d must not postdate now %d", create, now)
	}
	if now-create >= 86_400_000 {
		t.Errorf("want started within a day, have %d ms ago", now-create)
	}
	if _, ok := processCreateTimeMs(-1); ok {
		t.Error("pid -1 must read as dead")
	}
}

func TestIsSameMachineHostArm(t *testing.T) {
	c, _ := newTestClaims(t)
	for _, tc := range []struct {
		host string
		want bool
	}{
		{systemHostname(), true},
		{"", false},
		{"some-other-host-that-does-not-exist", false},
	} {
		if have := c.isSameMachine(tc.host, nil); have != tc.want {
			t.Errorf("host %q: want %v, have %v", tc.host, tc.want, have)
		}
	}
}

func TestIsSameMachineMachineArm(t *testing.T) {
	c, _ := newTestClaims(t)
	id := c.machineID()
	if id == "" {
		t.Skip("no OS machine id on this box")
	}
	if !c.isSameMachine("anything", &id) {
		t.Error("our own machine id must be same machine")
	}
	other := "00000000-0000-0000-0000-000000000000"
	if c.isSameMachine(systemHostname(), &other) {
		t.Error("another machine id must not be same machine, even with our hostname")
	}
}

func TestUnknownOwnMachineIDIsNotForeign(t *testing.T) {
	// Reachable on any box through the seam: our own id unreadable.
	c, _ := newTestClaims(t)
	c.machineID = func() string { return "" }
	id := "some-machine-id"
	if !c.isSameMachine("a-name-it-no-longer-has", &id) {
		t.Error("a claim naming a machine, read where ours is unknown, must not read as foreign")
	}
}

func TestMachineIDIsStableAcrossCalls(t *testing.T) {
	if a, b := machineIDOnce(), readMachineID(); a != b {
		t.Errorf("want a stable machine id, have %q then %q", a, b)
	}
}

func TestMakeClaimRecordsMachineIDNotHostname(t *testing.T) {
	c, _ := newTestClaims(t)
	rec := mustAcquire(t, c, "session:mid", "pty:owner", AcquireOptions{})
	if want := machineIDOnce(); want == "" {
		if rec.MachineID != nil {
			t.Errorf("want no machine_id, have %q", *rec.MachineID)
		}
	} else if rec.MachineID == nil || *rec.MachineID != want {
		t.Errorf("want machine_id %q, have %v", want, rec.MachineID)
	}
	if rec.Host != systemHostname() {
		t.Errorf("host must stay the hostname: want %q, have %q", systemHostname(), rec.Host)
	}
}

package kubelease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

const (
	ExitNoPerm      = cli.ExitNoPerm
	ExitUnavailable = cli.ExitUnavailable
)

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		name string
		err  error
		want int // 0: left alone
	}{
		{"401", apierrors.NewUnauthorized("Unauthorized"), ExitNoPerm},
		{"403", apierrors.NewForbidden(gr, "x", errors.New("no")), ExitNoPerm},
		{"x509", errors.New(`Get "https://127.0.0.1:1/": tls: failed to verify certificate: x509: certificate signed by unknown authority`), ExitNoPerm},
		{"request timeout", fmt.Errorf("get: %w", context.DeadlineExceeded), ExitUnavailable},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, ExitUnavailable},
		{"503", apierrors.NewServiceUnavailable("etcd down"), ExitUnavailable},
		{"504", apierrors.NewTimeoutError("slow", 1), ExitUnavailable},
		{"http:// at a TLS port", apierrors.NewGenericServerResponse(400, "get", gr, "x", "Client sent an HTTP request to an HTTPS server.", 0, true), ExitNoPerm},
		{"plugin hung", &PluginError{Plugin: "gke-auth", Hung: true, Err: context.DeadlineExceeded}, ExitUnavailable},
		{"plugin failed", &PluginError{Plugin: "gke-auth", Err: errors.New("exit status 1")}, ExitNoPerm},
		{"400", apierrors.NewBadRequest("bad"), 0},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("rv")), 0},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Lease"}, "x", field.ErrorList{}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Classify(tc.err, "Lease ns/x")
			have := 0
			if errors.Is(err, lease.ErrNoPerm) || errors.Is(err, lease.ErrUnavailable) {
				have = cli.ExitCode(err, io.Discard)
			}
			if have != tc.want {
				t.Fatalf("want exit code %d, have %d (%v)", tc.want, have, err)
			}
			if !errors.Is(err, tc.err) {
				t.Fatal("the API error must stay in the chain")
			}
		})
	}
	err := Classify(apierrors.NewForbidden(gr, "x", errors.New("no")), "Lease ns/x")
	if !strings.Contains(err.Error(), "Lease ns/x") || !strings.Contains(err.Error(), "update") {
		t.Fatalf("a 403 must name the object and the verbs to grant: %v", err)
	}
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		ns, name string
		ok       bool
	}{
		{"default", "nightly-report", true},
		{"jobs", "a.b.c", true},
		{"default", "Nightly", false},
		{"default", "a/b", false},
		{"default", "", false},
		{"default", strings.Repeat("a", 254), false},
		{"Jobs", "x", false},
		{"a.b", "x", false}, // a namespace is a DNS label
	} {
		if err := ValidName(tc.ns, tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidName(%q, %q): want ok=%v, have %v", tc.ns, tc.name, tc.ok, err)
		}
	}
}

// TestFenceBeforeAnyObserver checks the fence arithmetic for the kind's
// defaults: an observer (client-go or leasewrap) that saw a renewal at t,
// no earlier than the renewal's start s, judges the lease expired at
// t + leaseDurationSeconds >= s + TTL at the earliest; the supervisor's
// fence, plus the kill grace, must fall before that.
func TestFenceBeforeAnyObserver(t *testing.T) {
	for _, tc := range []struct{ ttl, grace time.Duration }{
		{DefaultTTL, 5 * time.Second}, // the kind's defaults
		{DefaultTTL, time.Second},
		{60 * time.Second, 10 * time.Second},
	} {
		s := time.Now()
		k, err := renew.New(renew.Config{TTL: tc.ttl, Grace: tc.grace, Renew: func(context.Context) error { return nil }}, s)
		if err != nil {
			t.Fatalf("TTL %v, grace %v: %v", tc.ttl, tc.grace, err)
		}
		stopped := k.Fence().Add(tc.grace) // SIGKILL at the latest
		if earliest := s.Add(tc.ttl); !stopped.Before(earliest) {
			t.Fatalf("TTL %v, grace %v: the job may run until %v after the renewal started, an observer may take over at %v",
				tc.ttl, tc.grace, stopped.Sub(s), earliest.Sub(s))
		}
	}
	if err := (renew.Config{TTL: DefaultTTL, Grace: 10 * time.Second, Renew: func(context.Context) error { return nil }}).Validate(); err == nil {
		t.Fatal("leasewrap's usual 10 s kill grace cannot hold a 15 s lease with the TTL/3 period: want a refusal (which is why the default kill grace is a third of the TTL, 5 s here)")
	}
}

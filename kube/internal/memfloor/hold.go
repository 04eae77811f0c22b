// Package memfloor is the floor of an idle kube holder's memory, for
// TestKubeMemory (-tags kubebench): what any holder must do while it holds
// a Lease — a watch on the object and a PUT of renewTime every period —
// written on net/http and encoding/json alone, over an *http.Client its
// caller builds (bare: crypto/tls only; transport: client-go's
// rest.HTTPClientFor). It is measurement code, not a client: no retries,
// no loss handling beyond stopping.
package memfloor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/internal/memtrim"
)

// lease is a Lease as the floor handles it: the metadata kept whole (a
// PUT must not drop what it does not own), the spec's fields by name.
type lease struct {
	APIVersion string                     `json:"apiVersion"`
	Kind       string                     `json:"kind"`
	Metadata   map[string]json.RawMessage `json:"metadata"`
	Spec       spec                       `json:"spec"`
}

type spec struct {
	HolderIdentity       *string `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32  `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *string `json:"acquireTime,omitempty"`
	RenewTime            *string `json:"renewTime,omitempty"`
	LeaseTransitions     *int32  `json:"leaseTransitions,omitempty"`
	Strategy             *string `json:"strategy,omitempty"`
	PreferredHolder      *string `json:"preferredHolder,omitempty"`
}

const micro = "2006-01-02T15:04:05.000000Z07:00"

// Main holds the Lease ns/name at server as id with c, renewing every
// period, until SIGTERM or SIGINT; it trims once the first renewal is done.
func Main(c *http.Client, server, ns, name, id string, period time.Duration) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := hold(ctx, c, server, ns, name, id, period); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "memfloor:", err)
		os.Exit(1)
	}
}

func hold(ctx context.Context, c *http.Client, server, ns, name, id string, period time.Duration) error {
	base := server + "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases"
	now := time.Now().UTC().Format(micro)
	ttl, zero := int32(15), int32(0)
	l := &lease{APIVersion: "coordination.k8s.io/v1", Kind: "Lease",
		Metadata: map[string]json.RawMessage{"name": json.RawMessage(fmt.Sprintf("%q", name))},
		Spec:     spec{HolderIdentity: &id, LeaseDurationSeconds: &ttl, AcquireTime: &now, RenewTime: &now, LeaseTransitions: &zero}}
	got, err := do(ctx, c, http.MethodPost, base, l)
	if err != nil {
		return err
	}
	go watch(ctx, c, base, name, got)
	t := time.NewTicker(period)
	defer t.Stop()
	trimmed := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := time.Now().UTC().Format(micro)
		got.Spec.RenewTime = &now
		if got, err = do(ctx, c, http.MethodPut, base+"/"+name, got); err != nil {
			return err
		}
		if !trimmed {
			memtrim.Idle()
			trimmed = true
		}
	}
}

func do(ctx context.Context, c *http.Client, method, u string, in *lease) (*lease, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, body)
	}
	out := &lease{}
	return out, json.Unmarshal(body, out)
}

// watch reads the object's events until ctx ends (restarting the watch
// when the server ends it).
func watch(ctx context.Context, c *http.Client, base, name string, from *lease) {
	var rv string
	json.Unmarshal(from.Metadata["resourceVersion"], &rv)
	for ctx.Err() == nil {
		q := url.Values{"watch": {"1"}, "fieldSelector": {"metadata.name=" + name},
			"resourceVersion": {rv}, "allowWatchBookmarks": {"true"}, "timeoutSeconds": {"300"}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?"+q.Encode(), nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		d := json.NewDecoder(resp.Body)
		for {
			var ev struct {
				Type   string `json:"type"`
				Object lease  `json:"object"`
			}
			if err := d.Decode(&ev); err != nil {
				break
			}
			var v string
			if json.Unmarshal(ev.Object.Metadata["resourceVersion"], &v) == nil && v != "" {
				rv = v
			}
		}
		resp.Body.Close()
	}
}

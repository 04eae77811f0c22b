package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/kube/kubelease"
)

// objectFlags name the Lease object and how to reach it. The connection
// follows kubectl: --kubeconfig, else $KUBECONFIG, else ~/.kube/config;
// in a pod without any of them, the service account (client-go's loading
// rules do all of it, exec credential plugins and token files included).
type objectFlags struct {
	Name           string        `arg:"" help:"Name of the Lease object (a DNS subdomain)."`
	Namespace      string        `short:"n" help:"Namespace of the Lease (default: the kubeconfig context's; in a pod without a kubeconfig, the pod's own; else default)."`
	Kubeconfig     string        `help:"Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config; in a pod without one, its service account)." type:"path"`
	Context        string        `name:"context" help:"The kubeconfig context to use (default: its current context)."`
	RequestTimeout time.Duration `help:"How long one API request (connecting included) may take before the API server counts as unavailable (exit 69)." default:"5s"`
	Skew           time.Duration `help:"Clock-skew margin: a holder is live until renewTime + leaseDurationSeconds + this, by our clock." default:"5s"`
}

// check is the part of Validate that needs no connection.
func (f *objectFlags) check() error {
	if err := kubelease.ValidName("default", f.Name); err != nil {
		return err
	}
	if f.Namespace != "" {
		if err := kubelease.ValidName(f.Namespace, f.Name); err != nil {
			return err
		}
	}
	if f.RequestTimeout <= 0 {
		return fmt.Errorf("--request-timeout %v must be positive", f.RequestTimeout)
	}
	if f.Skew < 0 {
		return fmt.Errorf("--skew %v must not be negative", f.Skew)
	}
	return nil
}

// errConfig marks a kubeconfig that cannot be used (missing file, unknown
// context, no configuration at all).
var errConfig = errors.New("kubeconfig")

// connect builds the client the loading rules describe and resolves the
// namespace.
func (f *objectFlags) connect() (kubelease.LeasesGetter, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		rules.ExplicitPath = f.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v (give --kubeconfig, set $KUBECONFIG, or run in a pod with a service account)", errConfig, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("%w: namespace: %v", errConfig, err)
	}
	if err := kubelease.ValidName(ns, f.Name); err != nil {
		return nil, "", fmt.Errorf("%w: %v", errConfig, err)
	}
	tuneRest(rc, f.RequestTimeout)
	restore := http2Health()
	cl, err := kubelease.NewClient(rc)
	restore()
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", errConfig, err)
	}
	return cl, ns, nil
}

// tuneRest bounds connecting by the request timeout (each request is
// bounded by its own context; rest.Config.Timeout would cut watches),
// lifts client-side throttling (a wrapper sends a request every few
// seconds) and names leasewrap in the API server's audit log.
func tuneRest(rc *rest.Config, timeout time.Duration) {
	rc.Timeout = 0
	if rc.Dial == nil {
		rc.Dial = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	}
	rc.QPS, rc.Burst = 50, 100
	rc.UserAgent = "leasewrap-kube/" + cli.ReadVersion(version).Version
}

// The HTTP/2 health check of the client's connection: a ping after this
// many seconds without a frame, and the connection closed when the ping
// is not answered within the second. client-go's defaults (30 s and 15 s)
// would let renewals run into a silently dead connection (an API server's
// node gone without a reset) for 45 s, past the fence; these find it
// within 5 s, and the next renewal dials again.
var http2HealthEnv = [][2]string{{"HTTP2_READ_IDLE_TIMEOUT_SECONDS", "3"}, {"HTTP2_PING_TIMEOUT_SECONDS", "2"}}

// http2Health sets the health check's variables that the user did not set,
// for client-go to read while it builds the transport, and returns the
// function that removes them again (so the child never sees them).
func http2Health() (restore func()) {
	var set []string
	for _, kv := range http2HealthEnv {
		if _, ok := os.LookupEnv(kv[0]); !ok {
			os.Setenv(kv[0], kv[1])
			set = append(set, kv[0])
		}
	}
	return func() {
		for _, k := range set {
			os.Unsetenv(k)
		}
	}
}

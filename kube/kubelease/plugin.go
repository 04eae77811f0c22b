package kubelease

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// PluginError reports that the kubeconfig's exec credential plugin did
// not hand over credentials: it failed, or (Hung) it had not returned
// when the request's deadline passed. client-go runs the plugin without
// a deadline of its own, so a plugin that hangs would hold every request
// for as long as it hangs; pluginBoundClient bounds it by the request's.
type PluginError struct {
	Plugin string // the plugin's command, as the kubeconfig names it
	Hung   bool
	Err    error
}

func (e *PluginError) Error() string {
	if e.Hung {
		return fmt.Sprintf("exec credential plugin %q did not return within the request timeout: %v", e.Plugin, e.Err)
	}
	return fmt.Sprintf("exec credential plugin %q: %v", e.Plugin, e.Err)
}

func (e *PluginError) Unwrap() error { return e.Err }

// reachedKey is the request context key of the flag that pastPlugin sets.
type reachedKey struct{}

// pastPlugin is the round tripper just inside client-go's exec
// authenticator: a request that gets here has its credentials.
type pastPlugin struct{ rt http.RoundTripper }

func (p pastPlugin) RoundTrip(req *http.Request) (*http.Response, error) {
	if r, ok := req.Context().Value(reachedKey{}).(*atomic.Bool); ok {
		r.Store(true)
	}
	return p.rt.RoundTrip(req)
}

// pluginBound is the outermost round tripper of a client whose
// credentials come from an exec plugin: it returns when the request's
// context ends even while the plugin still runs (the plugin's call is
// abandoned, left to return on its own), and names the plugin when the
// request never got past it.
type pluginBound struct {
	rt     http.RoundTripper
	plugin string
}

type roundTrip struct {
	resp *http.Response
	err  error
}

func (b pluginBound) RoundTrip(req *http.Request) (*http.Response, error) {
	reached := new(atomic.Bool)
	req = req.WithContext(context.WithValue(req.Context(), reachedKey{}, reached))
	done := make(chan roundTrip, 1) // buffered: an abandoned call never blocks
	// The one goroutine here that is not an actor: a plugin that hangs
	// cannot be interrupted (client-go runs it without a context), and the
	// request must not wait for it.
	go func() {
		resp, err := b.rt.RoundTrip(req)
		done <- roundTrip{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && !reached.Load() {
			return nil, &PluginError{Plugin: b.plugin, Err: r.err}
		}
		return r.resp, r.err
	case <-req.Context().Done():
		if reached.Load() {
			r := <-done // past the plugin: the transport honours the context
			return r.resp, r.err
		}
		go func() { // close what the abandoned call may still bring back
			if r := <-done; r.resp != nil {
				r.resp.Body.Close()
			}
		}()
		return nil, &PluginError{Plugin: b.plugin, Hung: true, Err: req.Context().Err()}
	}
}

// pluginBoundClient is rest.HTTPClientFor(cfg) for a configuration with an
// exec credential plugin, with the plugin bounded by each request's
// context (pluginBound).
func pluginBoundClient(cfg *rest.Config) (*http.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return pastPlugin{rt} }) // inside the plugin's wrapper
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	hc.Transport = pluginBound{rt: hc.Transport, plugin: cfg.ExecProvider.Command}
	return hc, nil
}

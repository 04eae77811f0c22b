package kubelease

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// LeasesGetter is what kubelease asks of the API server: one namespace's
// Leases. NewClient returns one; client-go's typed client fits behind a
// one-line adapter (its LeaseInterface has these methods).
type LeasesGetter interface {
	Leases(namespace string) LeaseInterface
}

// LeaseInterface is the subset of client-go's typed LeaseInterface that
// kubelease uses.
type LeaseInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordv1.Lease, error)
	Create(ctx context.Context, l *coordv1.Lease, opts metav1.CreateOptions) (*coordv1.Lease, error)
	Update(ctx context.Context, l *coordv1.Lease, opts metav1.UpdateOptions) (*coordv1.Lease, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// NewClient is a client of coordination.k8s.io/v1 Leases alone: the
// requests client-go's typed client sends, written by hand on the HTTP
// client client-go builds from c (rest.HTTPClientFor: TLS, tokens, exec
// credential plugins, impersonation, the user agent), with encoding/json
// on the typed Lease (the same encoder client-go's JSON serializer uses,
// so a PUT sends back every field the Lease type has). Neither a scheme
// nor client-go's REST client, decoders and rate limiter run: an idle
// holder's renewals and watch touch little code, so little of the
// executable stays resident (docs/KUBERNETES.md, memory). What client-go's
// REST client does that this does not: retries after a Retry-After
// answer (the renewal loop retries on its own, until the fence), client
// side throttling (lifted for leasewrap anyway) and printing the API
// server's warnings.
func NewClient(c *rest.Config) (LeasesGetter, error) {
	cfg := rest.CopyConfig(c)
	gv := coordv1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	base, path, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubelease: server address: %w", err)
	}
	var hc *http.Client
	if cfg.ExecProvider != nil {
		hc, err = pluginBoundClient(cfg)
	} else {
		hc, err = rest.HTTPClientFor(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("kubelease: HTTP client: %w", err)
	}
	return &client{hc: hc, base: strings.TrimSuffix(base.String(), "/") + path}, nil
}

type client struct {
	hc   *http.Client
	base string // https://HOST[/PREFIX]/apis/coordination.k8s.io/v1
}

func (c *client) Leases(namespace string) LeaseInterface {
	return &leases{c: c, ns: namespace}
}

type leases struct {
	c  *client
	ns string
}

// leaseType is what a Lease's body says it is.
var leaseType = metav1.TypeMeta{APIVersion: coordv1.SchemeGroupVersion.String(), Kind: "Lease"}

func (l *leases) url(name string, q url.Values) string {
	u := l.c.base + "/namespaces/" + url.PathEscape(l.ns) + "/leases"
	if name != "" {
		u += "/" + url.PathEscape(name)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func (l *leases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordv1.Lease, error) {
	q := url.Values{}
	set(q, "resourceVersion", opts.ResourceVersion)
	return l.do(ctx, http.MethodGet, name, q, nil)
}

func (l *leases) Create(ctx context.Context, in *coordv1.Lease, opts metav1.CreateOptions) (*coordv1.Lease, error) {
	return l.do(ctx, http.MethodPost, "", writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), in)
}

func (l *leases) Update(ctx context.Context, in *coordv1.Lease, opts metav1.UpdateOptions) (*coordv1.Lease, error) {
	return l.do(ctx, http.MethodPut, in.Name, writeQuery(opts.DryRun, opts.FieldManager, opts.FieldValidation), in)
}

func writeQuery(dryRun []string, manager, validation string) url.Values {
	q := url.Values{}
	for _, d := range dryRun {
		q.Add("dryRun", d)
	}
	set(q, "fieldManager", manager)
	set(q, "fieldValidation", validation)
	return q
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// do sends one request (in as its JSON body, if any) and decodes the
// Lease answered, or the error the way client-go's REST client makes it
// (a *apierrors.StatusError), so that apierrors.IsNotFound and the rest
// work as before.
func (l *leases) do(ctx context.Context, method, name string, q url.Values, in *coordv1.Lease) (*coordv1.Lease, error) {
	var body io.Reader
	if in != nil {
		typed := *in // shallow: only TypeMeta is set
		typed.TypeMeta = leaseType
		b, err := json.Marshal(&typed)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	resp, err := l.send(ctx, method, l.url(name, q), body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := readBody(resp)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if name == "" && in != nil {
			name = in.Name
		}
		return nil, statusError(resp, b, method, name)
	}
	out := &coordv1.Lease{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("kubelease: decode the Lease answered to %s: %w", method, err)
	}
	out.TypeMeta = metav1.TypeMeta{} // as client-go's typed client leaves it
	return out, nil
}

func (l *leases) send(ctx context.Context, method, u string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return l.c.hc.Do(req) // its *url.Error names the method and the URL, as client-go's did
}

// maxBody bounds what one answer may make leasewrap read: a Lease or a
// Status is a few kilobytes, and an object in etcd at most 1.5 MiB.
const maxBody = 4 << 20

// readBody reads resp's body, refusing one over maxBody (a proxy or a
// server that is not an API server answering endlessly).
func readBody(resp *http.Response) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("kubelease: the answer from %s is over %d MiB: not an API server's", resp.Request.URL.Redacted(), maxBody>>20)
	}
	return b, nil
}

// statusError is the error of an answer outside 2xx, as client-go's REST
// client builds it: the API server's Status when the body is one, else a
// generic error for the status code with the body as its cause.
func statusError(resp *http.Response, body []byte, method, name string) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Status == metav1.StatusFailure {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return apierrors.NewGenericServerResponse(resp.StatusCode, method, coordv1.Resource("leases"), name, strings.TrimSpace(string(body)), retry, true)
}

func (l *leases) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	q := url.Values{"watch": {"true"}}
	set(q, "fieldSelector", opts.FieldSelector)
	set(q, "labelSelector", opts.LabelSelector)
	set(q, "resourceVersion", opts.ResourceVersion)
	set(q, "resourceVersionMatch", string(opts.ResourceVersionMatch))
	if opts.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	var cancel context.CancelFunc
	if opts.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*opts.TimeoutSeconds, 10))
		// As client-go's request timeout: a server that never ends the
		// watch does not hold it open past the time asked for.
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*opts.TimeoutSeconds)*time.Second)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	resp, err := l.send(ctx, http.MethodGet, l.url("", q), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		b, _ := readBody(resp)
		return nil, statusError(resp, b, http.MethodGet, "")
	}
	return newStreamWatch(resp.Body, cancel), nil
}

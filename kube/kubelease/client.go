package kubelease

import (
	"context"
	"fmt"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
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

// NewClient is a client of coordination.k8s.io/v1 Leases alone, over
// client-go's REST client with a scheme that knows only them: the same
// requests as the typed client's, without the package inits of every
// built-in API group that client-go's shared scheme registers (about half
// of a wrapper's start-up in client-go's code).
func NewClient(c *rest.Config) (LeasesGetter, error) {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	if err := coordv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("kubelease: scheme: %w", err)
	}
	cfg := rest.CopyConfig(c)
	gv := coordv1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	var rc *rest.RESTClient
	var err error
	if cfg.ExecProvider != nil {
		rc, err = pluginBoundClient(cfg)
	} else {
		rc, err = rest.RESTClientFor(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("kubelease: REST client: %w", err)
	}
	return &client{rc: rc, pc: runtime.NewParameterCodec(s)}, nil
}

type client struct {
	rc *rest.RESTClient
	pc runtime.ParameterCodec
}

func (c *client) Leases(namespace string) LeaseInterface {
	return &leases{c: c, ns: namespace}
}

type leases struct {
	c  *client
	ns string
}

func (l *leases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordv1.Lease, error) {
	out := &coordv1.Lease{}
	err := l.c.rc.Get().Namespace(l.ns).Resource("leases").Name(name).
		VersionedParams(&opts, l.c.pc).Do(ctx).Into(out)
	return out, err
}

func (l *leases) Create(ctx context.Context, in *coordv1.Lease, opts metav1.CreateOptions) (*coordv1.Lease, error) {
	out := &coordv1.Lease{}
	err := l.c.rc.Post().Namespace(l.ns).Resource("leases").
		VersionedParams(&opts, l.c.pc).Body(in).Do(ctx).Into(out)
	return out, err
}

func (l *leases) Update(ctx context.Context, in *coordv1.Lease, opts metav1.UpdateOptions) (*coordv1.Lease, error) {
	out := &coordv1.Lease{}
	err := l.c.rc.Put().Namespace(l.ns).Resource("leases").Name(in.Name).
		VersionedParams(&opts, l.c.pc).Body(in).Do(ctx).Into(out)
	return out, err
}

func (l *leases) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	opts.Watch = true
	return l.c.rc.Get().Namespace(l.ns).Resource("leases").
		VersionedParams(&opts, l.c.pc).Timeout(timeout).Watch(ctx)
}

// Command transport is the memory floor of an idle kube holder on the HTTP
// client client-go builds from a kubeconfig (clientcmd, rest.HTTPClientFor)
// with hand-written requests (package memfloor): transport KUBECONFIG NAME
// IDENTITY. It shows what client-go's transport costs without its REST
// client, scheme and decoders.
package main

import (
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leasewrap/leasewrap/kube/internal/memfloor"
)

func main() {
	a := os.Args[1:]
	if len(a) != 3 {
		fmt.Fprintln(os.Stderr, "usage: transport KUBECONFIG NAME IDENTITY")
		os.Exit(2)
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: a[0]}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	memfloor.Main(hc, rc.Host, ns, a[1], a[2], time.Second)
}

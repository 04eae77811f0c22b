// Command kube-apiserver is Kubernetes' API server (k8s.io/kubernetes
// v1.37.2), built from source through the Go module proxy so that the kube
// kind's tests run against a real one. It lives in a module of its own, which
// no product module requires: only kube/scripts/build-apiserver.sh builds it.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() { os.Exit(cli.Run(app.NewAPIServerCommand())) }

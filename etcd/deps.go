//go:build tools

package etcd

import (
	_ "go.etcd.io/etcd/client/v3"
	_ "go.etcd.io/etcd/pkg/v3/proxy"
	_ "go.etcd.io/etcd/server/v3/embed"
)

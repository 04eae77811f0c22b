// Package etcdtest starts real etcd servers for tests, each in a
// re-executed copy of the test binary (never in the test process), so a
// test can pause (SIGSTOP), kill (SIGKILL) and restart them. Servers
// listen on loopback only, with fast ticks (TickMs 10, ElectionMs 100).
//
// A test package's TestMain calls Serve first: in a server process it
// runs the server and never returns.
package etcdtest

// Package kubetest starts a real Kubernetes API server for the kube kind's
// tests: Debian's etcd and kube-apiserver v1.37.2 (built from source by
// kube/scripts/build-apiserver.sh into a cache directory), each a process of
// its own on free loopback ports in a temporary directory, so that a test can
// pause (SIGSTOP), resume and restart the API server while leasewrap and
// client-go electors talk to it.
//
// Authentication is by static tokens and authorization by RBAC. Start writes
// one kubeconfig per user (see User): an admin in system:masters; the runner,
// whose Role grants the kube kind's verbs on leases in one namespace; a user
// with no grants (403); and a token the server does not know (401). Every
// kubeconfig trusts the serving CA and names the test namespace in its
// context.
//
// Availability: when the kube-apiserver binary is not in the cache, Start
// builds it (minutes, once per process); when that fails or etcd is not
// installed, the test is skipped, except under CI=true, where it fails:
// .ci/run installs and builds everything first (kube/scripts/ci.sh).
//
// Nothing here listens beyond 127.0.0.1, and every wait is bounded.
package kubetest

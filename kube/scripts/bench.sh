#!/usr/bin/env bash
# leasewrap-kube vs client-go's LeaderElector on one real kube-apiserver
# (Debian's etcd and the cached v1.37.2 build, loopback), in one run:
# takeover after the holder's SIGKILL, hand-over on release, the wall time
# of `kube run -- true`, API requests per second of an idle holder (audit
# log) extrapolated to 1 000, and the memory of one holder (TestKubeMemory:
# every process leasewrap adds, idle and during renewals, beside the
# floors of kube/internal/memfloor). Prints medians
# in ms ("bench ..." lines). Usage: bench.sh [N] (runs per figure, default
# 5; BENCH_QUICK=1: 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-5}
[ -z "${BENCH_QUICK:-}" ] || N=3
bash etcd/scripts/install-etcd.sh
bash kube/scripts/build-apiserver.sh >/dev/null
cd kube
KUBE_BENCH_N=$N go test -tags kubebench -count=1 -v -timeout 60m -run '^TestKube(Bench|Memory)$' ./cmd/leasewrap-kube/ \
  | grep -E '^(bench |--- |FAIL|ok )|kubetest:' || { echo "bench failed" >&2; exit 1; }
